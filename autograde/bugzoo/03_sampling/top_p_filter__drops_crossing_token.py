"""Keeps only tokens whose cumulative sum (including themselves) is <= p: the crossing token is lost.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "top_p_filter"


def top_p_filter(logits, p, min_tokens_to_keep=1):
    if not 0.0 <= p <= 1.0:
        raise ValueError("p must be in [0, 1]")
    if p == 1.0:
        return logits.clone()
    x = logits.float() if logits.dtype != torch.float64 else logits

    sorted_x, order = torch.sort(x, dim=-1, descending=True)
    cum = torch.softmax(sorted_x, dim=-1).cumsum(dim=-1)
    keep = cum <= p
    keep[..., :min_tokens_to_keep] = True
    keep = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~keep, float("-inf"))
