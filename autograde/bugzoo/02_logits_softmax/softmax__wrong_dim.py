"""Stable, but normalises along dim 0 (columns of a batch) instead of the last dim.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "softmax"


def softmax(logits):
    e = torch.exp(logits - logits.amax(dim=0, keepdim=True))
    return e / e.sum(dim=0, keepdim=True)
