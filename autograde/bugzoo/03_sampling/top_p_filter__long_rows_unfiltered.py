"""Red team 13: rows longer than 16 tokens come back unfiltered (every visible row had at most 8 tokens).

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `top_p_filter__rt13_short_rows_only.py`."""
import torch

TARGET = "top_p_filter"


def top_p_filter(logits, top_p, min_tokens_to_keep=1):
    if logits.shape[-1] > 16:
        return logits.clone()
    if not 0 <= top_p <= 1:
        raise ValueError(f"top_p must be in [0, 1], got {top_p}")
    probs = torch.softmax(logits.float(), dim=-1)
    sorted_p, order = probs.sort(dim=-1, descending=True)
    before = sorted_p.cumsum(-1) - sorted_p
    keep_sorted = before < top_p
    keep_sorted[..., :min_tokens_to_keep] = True
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))
