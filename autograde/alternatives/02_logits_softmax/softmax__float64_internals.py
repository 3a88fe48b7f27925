"""Stable softmax computed in float64 and cast back to the input's dtype."""
import torch

TARGET = "softmax"


def softmax(logits):
    x = logits.double()
    e = (x - x.max(dim=-1, keepdim=True).values).exp()
    return (e / e.sum(dim=-1, keepdim=True)).to(logits.dtype)
