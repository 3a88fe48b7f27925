"""Subtracts the max of the whole tensor, not of each row: a row far below the max underflows to 0/0.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "softmax"


def softmax(logits):
    e = torch.exp(logits - logits.max())
    return e / e.sum(dim=-1, keepdim=True)
