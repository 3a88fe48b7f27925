"""Casts to float32 'to be safe': a float64 input comes back float32 and loses precision.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "softmax"


def softmax(logits):
    x = logits.float()
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)
