"""True = blocked (nn.MultiheadAttention's convention), not True = allowed.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "causal_mask"


def causal_mask(T):
    return torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)
