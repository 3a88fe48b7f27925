"""Probabilities computed in the input's dtype: bfloat16 rounding moves tokens across the threshold.

Found by a blind class (session 8).
Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "min_p_filter"


def min_p_filter(logits, min_p, min_tokens_to_keep=1):
    if not 0.0 <= min_p <= 1.0:
        raise ValueError("min_p must be in [0, 1]")
    if not isinstance(min_tokens_to_keep, int) or min_tokens_to_keep < 1:
        raise ValueError("min_tokens_to_keep must be a positive int")
    probs = torch.softmax(logits, dim=-1)
    keep = probs >= min_p * probs.amax(dim=-1, keepdim=True)
    top = torch.topk(logits, min(min_tokens_to_keep, logits.shape[-1]), dim=-1).indices
    keep = keep.scatter(-1, top, True)
    return logits.masked_fill(~keep, float("-inf"))
