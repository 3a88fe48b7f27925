"""torch.topk(..., 1).indices keeps a size-1 last dim: shape [..., 1] instead of [...].

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "greedy"


def greedy(logits):
    return torch.topk(logits, 1, dim=-1).indices
