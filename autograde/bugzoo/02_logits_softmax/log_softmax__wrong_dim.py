"""Stable, but along dim 0 instead of the last dim.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "log_softmax"


def log_softmax(logits):
    shifted = logits - logits.amax(dim=0, keepdim=True)
    return shifted - torch.log(torch.exp(shifted).sum(dim=0, keepdim=True))
