"""Origin: blind author 40 (shown only the student notebooks). Masks with -1e9 instead of -inf: when every allowed score is below -1e9 (large scores) the future gets the weight; exploits 'hidden before the softmax, so its weight is exactly 0' and 'large scores'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "causal_attention"

import math
import torch

def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    T = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~causal_mask(T).to(q.device), -1e9)
    return torch.softmax(scores, dim=-1) @ v
