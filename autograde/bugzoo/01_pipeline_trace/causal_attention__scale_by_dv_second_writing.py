"""Origin: blind author 40 (shown only the student notebooks). Scales by sqrt(v.shape[-1]) instead of sqrt(d): identical when d_v = d (as the checks use), wrong otherwise; exploits '$d$ in the formula is q's and k's feature size. d_v may differ from d'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "causal_attention"

import math
import torch

def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    T = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])
    scores = scores.masked_fill(~causal_mask(T).to(q.device), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
