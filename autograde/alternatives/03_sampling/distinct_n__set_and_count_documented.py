"""Written by a blind honest student (class 7, h03_alt3), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "distinct_n"


def distinct_n(sequences: list[list[int]], n: int) -> float:
    """Distinct n-grams / all n-grams, pooled over sequences (n-grams never cross sequences)."""
    if n < 1:
        raise ValueError("n must be >= 1")
    seen, total = set(), 0
    for seq in sequences:
        for i in range(len(seq) - n + 1):
            seen.add(tuple(seq[i:i + n]))
            total += 1
    return 0.0 if total == 0 else len(seen) / total
