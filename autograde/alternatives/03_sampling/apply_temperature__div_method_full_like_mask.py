"""Written by a blind honest student (class 6, h03b), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "apply_temperature"

def apply_temperature(logits, T):
    if T < 0:
        raise ValueError("temperature must be non-negative")
    if T > 0:
        return logits.div(T)
    m = logits.max(dim=-1, keepdim=True).values
    return torch.where(logits == m, logits, torch.full_like(logits, float("-inf")))
