"""Blind 38 (read only the notebook): Scales by sqrt of v's feature size instead of q/k's, identical whenever d_v = d; text: "`d_v` may differ from `d` ... $d$ in the formula is `q`'s and `k`'s feature size".

Runs in the notebook's namespace (its other functions are the reference ones)."""
import math

import torch

TARGET = "causal_attention"


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """softmax(q k^T / sqrt(d), keys j > i masked out) v, for q, k: [..., T, d] and v: [..., T, d_v]."""
    T, d = v.shape[-2], v.shape[-1]
    scores = q @ k.transpose(-2, -1) / math.sqrt(d)
    scores = scores.masked_fill(~causal_mask(T).to(q.device), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
