"""Red team 11: centred on the mean of the finite logits, not their max: stable while the logits are close
together, but [500, -500] has mean 0 and exp(500) overflows float32 (inf / inf = NaN).

Formerly `softmax__rt11_mean_centred.py`."""
import torch

TARGET = "softmax"


def softmax(logits):
    fin = torch.isfinite(logits)
    c = torch.where(fin, logits, torch.zeros_like(logits)).sum(-1, keepdim=True) / fin.sum(-1, keepdim=True)
    e = torch.exp(logits - c)
    return e / e.sum(-1, keepdim=True)
