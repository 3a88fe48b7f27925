"""log(p + 1e-3) to dodge log(0): biased for every small probability.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "entropy"


def entropy(probs):
    return -(probs * torch.log(probs + 1e-3)).sum(dim=-1)
