"""Divides in float32 and casts back (blind class 8): float64 logits lose precision (~1e-7 relative); the
text returns logits / T with the dtype kept.

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `apply_temperature__class8_float32_division.py`."""
import math

import torch

TARGET = "apply_temperature"


def apply_temperature(logits: torch.Tensor, T: float) -> torch.Tensor:
    """logits / T; T = 0 keeps only the largest logit(s) of each row (greedy), without dividing by zero."""
    if T < 0:
        raise ValueError("T must be >= 0")
    if T == 0:
        m = logits.float().max(dim=-1, keepdim=True).values
        return logits.masked_fill(logits.float() < m, float("-inf"))
    return (logits.float() / T).to(logits.dtype)
