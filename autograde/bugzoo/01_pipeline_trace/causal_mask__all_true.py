"""No masking at all (the notes' block): every position sees everything.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "causal_mask"


def causal_mask(T):
    return torch.ones(T, T, dtype=torch.bool)
