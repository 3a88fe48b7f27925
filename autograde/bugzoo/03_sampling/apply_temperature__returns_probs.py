"""Returns probabilities softmax(z / T) instead of logits: cannot chain.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "apply_temperature"


def apply_temperature(logits, T):
    if T < 0:
        raise ValueError("T must be >= 0")
    if T == 0:
        return (logits == logits.amax(dim=-1, keepdim=True)).to(logits.dtype)
    return torch.softmax(logits / T, dim=-1)
