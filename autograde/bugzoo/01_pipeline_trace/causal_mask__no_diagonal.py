"""tril(-1): a position may not see itself (row 0 sees nothing: NaN after softmax).

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "causal_mask"


def causal_mask(T):
    return torch.ones(T, T, dtype=torch.bool).tril(diagonal=-1)
