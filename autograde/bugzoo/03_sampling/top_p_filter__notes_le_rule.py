"""Origin: blind author 40 (shown only the student notebooks). Keeps token j when M_j <= p (the notes' 'exceeds' rule): one token too many when a prefix sums to exactly p; exploits 'keep token j when M_j < p'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "top_p_filter"

import torch

def top_p_filter(logits: torch.Tensor, p: float, min_tokens_to_keep: int = 1) -> torch.Tensor:
    if not 0 <= p <= 1 or not isinstance(min_tokens_to_keep, int) or min_tokens_to_keep < 1:
        raise ValueError("p must be in [0, 1] and min_tokens_to_keep a positive integer")
    probs = torch.softmax(logits.float(), dim=-1)
    sp, si = torch.sort(probs, dim=-1, descending=True)
    keep_sorted = (sp.cumsum(-1) - sp) <= p
    keep_sorted[..., :min_tokens_to_keep] = True
    keep = torch.zeros_like(keep_sorted).scatter(-1, si, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))
