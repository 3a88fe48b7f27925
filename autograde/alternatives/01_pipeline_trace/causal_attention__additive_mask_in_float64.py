"""Written by a blind honest student (class 7, h01_alt2), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "causal_attention"


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """softmax(q k^T / sqrt(d), keys j > i masked out) v, for q, k, v of shape [..., T, d]."""
    T, d = q.shape[-2], q.shape[-1]
    q64, k64, v64 = q.double(), k.double(), v.double()
    scores = torch.matmul(q64, k64.transpose(-1, -2)) / math.sqrt(d)
    additive = torch.zeros(T, T, dtype=torch.float64, device=q.device)
    additive = additive.masked_fill(~causal_mask(T).to(q.device), float("-inf"))
    w = torch.softmax(scores + additive, dim=-1)
    return torch.matmul(w, v64).to(q.dtype)
