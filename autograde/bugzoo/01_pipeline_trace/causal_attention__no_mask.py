"""No mask (the notes' block): every position reads the future.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import math

import torch

TARGET = "causal_attention"


def causal_attention(q, k, v):
    T, d = q.shape[-2], q.shape[-1]
    allowed = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
    scores = q @ k.transpose(-2, -1) / math.sqrt(d)
    return torch.softmax(scores, dim=-1) @ v
