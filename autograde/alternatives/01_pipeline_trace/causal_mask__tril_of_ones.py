"""torch.tril of a boolean matrix of ones: the built-in way to build the same mask."""
import torch

TARGET = "causal_mask"


def causal_mask(T):
    return torch.ones(T, T, dtype=torch.bool).tril()
