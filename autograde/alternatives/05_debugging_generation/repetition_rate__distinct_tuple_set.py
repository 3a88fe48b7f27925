"""Written by a blind honest student (class 6, h05a), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "repetition_rate"

def repetition_rate(ids, n=4):
    if n < 1:
        raise ValueError("n < 1")
    seq = list(map(int, ids))
    total = len(seq) - n + 1
    if total < 1:
        return 0.0
    distinct = len({tuple(seq[i:i + n]) for i in range(total)})
    return 1.0 - distinct / total
