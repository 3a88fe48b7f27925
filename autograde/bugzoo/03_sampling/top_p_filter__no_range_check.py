"""Origin: blind author 40 (shown only the student notebooks). Never validates p: p = 1.5 or -0.1 is silently accepted; exploits 'raise ValueError if p is outside [0, 1]'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "top_p_filter"

import torch

def top_p_filter(logits: torch.Tensor, p: float, min_tokens_to_keep: int = 1) -> torch.Tensor:
    probs = torch.softmax(logits.float(), dim=-1)
    sp, si = torch.sort(probs, dim=-1, descending=True)
    keep_sorted = ((sp.cumsum(-1) - sp) < p) | (p >= 1)
    keep_sorted[..., :min_tokens_to_keep] = True
    keep = torch.zeros_like(keep_sorted).scatter(-1, si, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))
