"""Softmax and cumulative sum in the input dtype: bfloat16 sums move the cut.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "top_p_filter"


def top_p_filter(logits, p, min_tokens_to_keep=1):
    if not 0.0 <= p <= 1.0:
        raise ValueError("p must be in [0, 1]")
    if p == 1.0:
        return logits.clone()
    sorted_x, order = torch.sort(logits, dim=-1, descending=True)
    probs = torch.softmax(sorted_x, dim=-1)
    keep = (probs.cumsum(dim=-1) - probs) < p
    keep[..., :min_tokens_to_keep] = True
    keep = torch.zeros_like(keep).scatter(-1, order, keep)
    return logits.masked_fill(~keep, float("-inf"))
