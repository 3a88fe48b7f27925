"""Written by a blind honest student (class 7, h03_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "distinct_n"


from collections import Counter
def distinct_n(sequences: list[list[int]], n: int) -> float:
    """Distinct n-grams / all n-grams, pooled over sequences (n-grams never cross sequences)."""
    if n < 1:
        raise ValueError("n must be a positive integer")
    counts = Counter()
    for seq in sequences:
        seq = list(seq)
        counts.update(zip(*(seq[i:] for i in range(n))))
    total = sum(counts.values())
    return len(counts) / total if total else 0.0
