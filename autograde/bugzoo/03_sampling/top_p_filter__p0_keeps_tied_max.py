"""Blind 38 (issue 38's blind author, who read only the notebook; caught only after issue 38's cases): Treats p = 0 as "greedy" and keeps every token tied with the maximum, not exactly min_tokens_to_keep; text: "`p == 0` keeps only `min_tokens_to_keep`" and "keep exactly `min_tokens_to_keep`: any of the tied ones will do".

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `top_p_filter__blind38_p0_keeps_tied_max.py`."""
import torch

TARGET = "top_p_filter"


def top_p_filter(logits: torch.Tensor, p: float, min_tokens_to_keep: int = 1) -> torch.Tensor:
    """Keep the smallest set of most likely tokens whose probability reaches p (Holtzman et al. 2020)."""
    if not 0 <= p <= 1:
        raise ValueError(f"p must be in [0, 1], got {p}")
    if isinstance(min_tokens_to_keep, bool) or not isinstance(min_tokens_to_keep, int) or min_tokens_to_keep < 1:
        raise ValueError("min_tokens_to_keep must be a positive integer")
    if p == 1:
        return logits.clone()
    if p == 0 and min_tokens_to_keep == 1:                     # nothing reaches 0: greedy
        return logits.masked_fill(logits < logits.max(dim=-1, keepdim=True).values, float("-inf"))
    probs = torch.softmax(logits.float(), dim=-1)
    sorted_p, order = torch.sort(probs, dim=-1, descending=True)
    cum = torch.cumsum(sorted_p, dim=-1)
    before = torch.cat([torch.zeros_like(cum[..., :1]), cum[..., :-1]], dim=-1)
    keep_sorted = before < p
    keep_sorted[..., :min_tokens_to_keep] = True
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))
