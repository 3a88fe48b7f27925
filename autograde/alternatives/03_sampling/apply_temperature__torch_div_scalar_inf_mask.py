"""Written by a blind honest student (class 7, h03_alt3), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "apply_temperature"


def apply_temperature(logits: torch.Tensor, T: float) -> torch.Tensor:
    """logits / T; T = 0 keeps only the largest logit(s) of each row (greedy), without dividing by zero."""
    if T < 0:
        raise ValueError(f"temperature must be non-negative, got {T}")
    if T > 0:
        return torch.div(logits, T)
    top = torch.max(logits, dim=-1, keepdim=True).values
    return torch.where(logits == top, logits, torch.tensor(float("-inf"), dtype=logits.dtype, device=logits.device))
