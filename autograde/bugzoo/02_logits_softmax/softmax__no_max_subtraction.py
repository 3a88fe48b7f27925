"""Straight from the formula: exp(1000) overflows to inf and inf / inf = NaN.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "softmax"


def softmax(logits):
    e = torch.exp(logits)
    return e / e.sum(dim=-1, keepdim=True)
