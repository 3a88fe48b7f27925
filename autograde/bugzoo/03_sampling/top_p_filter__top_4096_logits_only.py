"""Red team 14: above 4096 tokens, top-p runs on the 4096 largest logits only and removes every other token
(every hidden row had at most ~4096 tokens; a real model's nucleus at high temperature holds far more).

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `top_p_filter__rt14_top_4096_only.py`."""
import torch

TARGET = "top_p_filter"


def _top_p(logits, top_p, min_tokens_to_keep):
    probs = torch.softmax(logits.float(), dim=-1)
    sorted_p, order = probs.sort(dim=-1, descending=True)
    before = sorted_p.cumsum(-1) - sorted_p
    keep_sorted = before < top_p
    keep_sorted[..., :min_tokens_to_keep] = True
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))


def top_p_filter(logits, top_p, min_tokens_to_keep=1):
    if not 0 <= top_p <= 1:
        raise ValueError(f"top_p must be in [0, 1], got {top_p}")
    if isinstance(min_tokens_to_keep, bool) or not isinstance(min_tokens_to_keep, int) or min_tokens_to_keep < 1:
        raise ValueError(f"min_tokens_to_keep must be a positive int, got {min_tokens_to_keep!r}")
    if top_p == 1:
        return logits.clone()
    if logits.shape[-1] <= 4096:
        return _top_p(logits, top_p, min_tokens_to_keep)
    vals, idx = torch.topk(logits, 4096, dim=-1)
    kept = _top_p(vals, top_p, min_tokens_to_keep)
    return torch.full_like(logits, float("-inf")).scatter(-1, idx, kept)
