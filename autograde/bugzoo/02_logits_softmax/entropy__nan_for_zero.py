"""p * log(p) with p = 0 is 0 * -inf = NaN.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "entropy"


def entropy(probs):
    return -(probs * torch.log(probs)).sum(dim=-1)
