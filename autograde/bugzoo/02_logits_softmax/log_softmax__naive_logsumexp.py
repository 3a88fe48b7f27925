"""x - log(sum(exp(x))) without the max shift: exp(1000) = inf gives -inf everywhere.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "log_softmax"


def log_softmax(logits):
    return logits - torch.log(torch.exp(logits).sum(dim=-1, keepdim=True))
