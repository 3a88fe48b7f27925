"""T = 0 keeps only the first of tied maxima.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "apply_temperature"


def apply_temperature(logits, T):
    if T < 0:
        raise ValueError("T must be >= 0")
    if T == 0:
        keep = torch.zeros_like(logits, dtype=torch.bool).scatter(-1, logits.argmax(dim=-1, keepdim=True), True)
        return logits.masked_fill(~keep, float("-inf"))
    return logits / T
