"""Written by a blind honest student (class 6, h02b), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "softmax"

def softmax(logits):
    x = logits.double()
    m = x.max(dim=-1, keepdim=True).values
    e = (x - m).exp()
    return (e / e.sum(-1, keepdim=True)).to(logits.dtype)
