"""Written by a blind honest student (class 6, h05b), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "repetition_rate"

def repetition_rate(ids, n=4):
    if n < 1:
        raise ValueError(n)
    t = torch.as_tensor(ids, dtype=torch.long).reshape(-1)
    if t.numel() < n:
        return 0.0
    grams = t.unfold(0, n, 1)
    uniq = torch.unique(grams, dim=0)
    return float(1 - uniq.shape[0] / grams.shape[0])
