"""Written by a blind honest student (class 6, h01b), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "causal_attention"

def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    T, d = q.shape[-2], q.shape[-1]
    s = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(d))
    s = s.masked_fill(causal_mask(T).to(q.device).logical_not(), -math.inf)
    s = s - s.amax(dim=-1, keepdim=True)
    e = s.exp()
    return torch.matmul(e / e.sum(dim=-1, keepdim=True), v)
