"""An additive float mask (0 / -inf) instead of a bool mask.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "causal_mask"


def causal_mask(T):
    return torch.zeros(T, T).masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float('-inf'))
