"""Origin: blind author 40 (shown only the student notebooks). Computes in float32 and casts back: float64 inputs lose accuracy; exploits 'The output has ... the inputs' dtype' and the float64 comparison with SDPA.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "causal_attention"

import math
import torch

def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    T = q.shape[-2]
    qf, kf, vf = q.float(), k.float(), v.float()
    scores = qf @ kf.transpose(-2, -1) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~causal_mask(T).to(q.device), float("-inf"))
    return (torch.softmax(scores, dim=-1) @ vf).to(q.dtype)
