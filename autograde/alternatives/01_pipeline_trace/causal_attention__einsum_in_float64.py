"""Written by a blind honest student (class 6, h01a), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "causal_attention"

def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    T, d = q.shape[-2], q.shape[-1]
    s = torch.einsum("...id,...jd->...ij", q.double(), k.double()) / math.sqrt(d)
    s = torch.where(causal_mask(T).to(q.device), s, torch.tensor(float("-inf"), dtype=s.dtype, device=q.device))
    w = torch.softmax(s, dim=-1)
    return torch.einsum("...ij,...jd->...id", w, v.double()).to(q.dtype)
