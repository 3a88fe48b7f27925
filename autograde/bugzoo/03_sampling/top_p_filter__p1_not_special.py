"""Origin: blind author 40 (shown only the student notebooks). No special case for p == 1: when the float32 cumulative sum reaches 1.0 before the tail, tail tokens are dropped at p = 1; exploits 'p == 1 keeps every token'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "top_p_filter"

import torch

def top_p_filter(logits: torch.Tensor, p: float, min_tokens_to_keep: int = 1) -> torch.Tensor:
    if not 0 <= p <= 1 or not isinstance(min_tokens_to_keep, int) or min_tokens_to_keep < 1:
        raise ValueError("p must be in [0, 1] and min_tokens_to_keep a positive integer")
    probs = torch.softmax(logits.float(), dim=-1)
    sp, si = torch.sort(probs, dim=-1, descending=True)
    keep_sorted = (sp.cumsum(-1) - sp) < p
    keep_sorted[..., :min_tokens_to_keep] = True
    keep = torch.zeros_like(keep_sorted).scatter(-1, si, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))
