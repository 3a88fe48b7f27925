"""Written by a blind honest student (class 6, h03a), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "distinct_n"

def distinct_n(sequences, n):
    if n < 1:
        raise ValueError("n must be >= 1")
    seen, total = set(), 0
    for s in sequences:
        s = list(s)
        for i in range(len(s) - n + 1):
            seen.add(tuple(s[i:i + n])); total += 1
    return 0.0 if total == 0 else len(seen) / total
