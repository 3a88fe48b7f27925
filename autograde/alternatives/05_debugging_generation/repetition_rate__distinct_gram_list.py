"""Written by a blind honest student (class 7, h05_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "repetition_rate"


def repetition_rate(ids, n: int = 4) -> float:
    """Share of the n-grams of ids that already occurred earlier in ids (0.0 if there are none)."""
    if n < 1:
        raise ValueError("n must be at least 1")
    seq = ids.tolist() if isinstance(ids, torch.Tensor) else list(ids)
    grams = [tuple(seq[i:i + n]) for i in range(len(seq) - n + 1)]
    if not grams:
        return 0.0
    return 1.0 - len(set(grams)) / len(grams)
