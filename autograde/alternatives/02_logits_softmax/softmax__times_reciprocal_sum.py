"""Written by a blind honest student (class 6, h02a), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "softmax"

def softmax(logits):
    m = torch.max(logits, dim=-1, keepdim=True).values
    e = torch.exp(logits - m)
    return e * (1.0 / e.sum(dim=-1, keepdim=True))
