"""Written by a blind honest student (class 6, h03b), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "top_p_filter"

def top_p_filter(logits, p, min_tokens_to_keep=1):
    if p < 0 or p > 1:
        raise ValueError("p must be within [0, 1]")
    if min_tokens_to_keep < 1:
        raise ValueError("min_tokens_to_keep must be at least 1")
    probs = torch.softmax(logits.double(), dim=-1)
    sp, si = probs.sort(dim=-1, descending=True)
    mass_before = torch.cat([torch.zeros_like(sp[..., :1]), sp.cumsum(-1)[..., :-1]], dim=-1)
    keep_sorted = (mass_before < p) | (torch.arange(sp.shape[-1]) < min_tokens_to_keep)
    if p == 1:
        keep_sorted = torch.ones_like(keep_sorted)
    keep = torch.empty_like(keep_sorted)
    keep.scatter_(-1, si, keep_sorted)
    return torch.where(keep, logits, torch.tensor(float("-inf"), dtype=logits.dtype))
