"""Written by a blind honest student (class 6, h03a), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "sample"

def sample(probs, generator):
    c = probs.to(torch.float64).cumsum(-1)
    u = torch.rand(c.shape[:-1], generator=generator, dtype=torch.float64).unsqueeze(-1) * c[..., -1:]
    return (c <= u).sum(-1).clamp(max=probs.shape[-1] - 1).to(torch.long)
