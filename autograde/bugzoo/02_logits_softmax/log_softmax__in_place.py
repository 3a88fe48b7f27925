"""Correct values, but subtracts from the caller's tensor in place.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "log_softmax"


def log_softmax(logits):
    logits.sub_(logits.amax(dim=-1, keepdim=True))
    return logits - torch.log(torch.exp(logits).sum(dim=-1, keepdim=True))
