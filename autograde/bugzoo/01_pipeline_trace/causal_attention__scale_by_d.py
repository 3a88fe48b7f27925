"""Divides by d instead of sqrt(d).

Runs in the notebook's namespace (its other functions are the reference ones)."""
import math

import torch

TARGET = "causal_attention"


def causal_attention(q, k, v):
    T, d = q.shape[-2], q.shape[-1]
    allowed = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
    scores = (q @ k.transpose(-2, -1) / d).masked_fill(~allowed, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
