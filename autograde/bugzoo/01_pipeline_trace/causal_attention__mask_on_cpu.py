"""Origin: blind author 40 (shown only the student notebooks). Uses causal_mask(T) without moving it to q's device; exploits 'the inputs may live on any device (a GPU too): your mask must be on the same one'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "causal_attention"

import math
import torch

def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    T = q.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~causal_mask(T), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v
