"""Adds the log-sum-exp instead of subtracting it.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "log_softmax"


def log_softmax(logits):
    shifted = logits - logits.amax(dim=-1, keepdim=True)
    return shifted + torch.log(torch.exp(shifted).sum(dim=-1, keepdim=True))
