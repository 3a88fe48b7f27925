"""Written by a blind honest student (class 7, h01_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "causal_attention"


def causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """softmax(q k^T / sqrt(d), keys j > i masked out) v, for q, k, v of shape [..., T, d]."""
    d = q.shape[-1]
    scores = torch.einsum("...id,...jd->...ij", q, k) * (1.0 / math.sqrt(d))
    mask = causal_mask(q.shape[-2]).to(q.device)
    scores = torch.where(mask, scores, torch.tensor(float("-inf"), dtype=scores.dtype, device=q.device))
    scores = scores - scores.amax(dim=-1, keepdim=True)
    w = scores.exp()
    w = w / w.sum(dim=-1, keepdim=True)
    return torch.einsum("...ij,...jd->...id", w, v)
