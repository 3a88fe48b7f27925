"""amax/sum without keepdim=True: fine for one row, broadcasts against the wrong axis for a batch.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "softmax"


def softmax(logits):
    e = torch.exp(logits - logits.amax(dim=-1))
    return e / e.sum(dim=-1)
