"""Written by a blind honest student (class 7, h05_alt3), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "repetition_rate"


def repetition_rate(ids, n: int = 4) -> float:
    """Share of the n-grams of ids that already occurred earlier in ids (0.0 if there are none)."""
    if n < 1:
        raise ValueError("n must be >= 1")
    seq = [int(t) for t in ids]
    total = max(len(seq) - n + 1, 0)
    seen = set()
    repeats = 0
    for gram in zip(*(seq[k:] for k in range(n))):
        repeats += gram in seen
        seen.add(gram)
    return repeats / total if total else 0.0
