"""Written by a blind honest student (class 6, h03a), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "greedy"

def greedy(logits):
    m = logits.amax(dim=-1, keepdim=True)
    V = logits.shape[-1]
    idx = torch.arange(V, device=logits.device).expand(logits.shape)
    return torch.where(logits == m, idx, V).amin(dim=-1)
