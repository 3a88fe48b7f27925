"""Subtracts the minimum instead of the maximum: exponents stay positive and still overflow for wide rows.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "softmax"


def softmax(logits):
    e = torch.exp(logits - logits.amin(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)
