"""Written by a blind honest student (class 7, h03_alt2), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "top_p_filter"


def top_p_filter(logits: torch.Tensor, p: float, min_tokens_to_keep: int = 1) -> torch.Tensor:
    """Keep the smallest set of most likely tokens whose probability reaches p (Holtzman et al. 2020)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError("p must be between 0 and 1")
    if min_tokens_to_keep < 1:
        raise ValueError("min_tokens_to_keep must be >= 1")
    if p >= 1.0:
        return logits.clone()
    probs = torch.softmax(logits.float(), dim=-1)
    sp, si = probs.sort(dim=-1, descending=True)
    mass_before = torch.cumsum(sp, dim=-1)
    mass_before = torch.cat([torch.zeros_like(mass_before[..., :1]), mass_before[..., :-1]], dim=-1)
    keep_sorted = mass_before < p
    pos = torch.arange(sp.shape[-1], device=logits.device)
    keep_sorted |= pos < min_tokens_to_keep
    keep = torch.empty_like(keep_sorted)
    keep.scatter_(-1, si, keep_sorted)
    return torch.where(keep, logits, torch.full_like(logits, float("-inf")))
