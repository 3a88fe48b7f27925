"""Uses log(sum(exp(x - m))) as if it were the log-sum-exp of x: off by the row max m.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "log_softmax"


def log_softmax(logits):
    m = logits.amax(dim=-1, keepdim=True)
    return logits - torch.log(torch.exp(logits - m).sum(dim=-1, keepdim=True))
