"""Written by a blind honest student (class 7, h02_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "probs_at_temperature"


def probs_at_temperature(logits: torch.Tensor, T: float) -> torch.Tensor:
    """softmax(logits / T) along the last dim; T = 0 gives the greedy one-hot (ties split evenly)."""
    if T < 0:
        raise ValueError(f"temperature must be >= 0, got {T}")
    if T > 0:
        return torch.softmax(logits / T, dim=-1)
    top = logits.max(dim=-1, keepdim=True).values
    hits = (logits == top)
    count = hits.sum(dim=-1, keepdim=True).to(logits.dtype)
    return torch.where(hits, 1.0 / count, torch.zeros((), dtype=logits.dtype))
