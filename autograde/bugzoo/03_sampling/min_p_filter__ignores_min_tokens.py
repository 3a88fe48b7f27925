"""min_tokens_to_keep ignored: only the rule decides.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "min_p_filter"


def min_p_filter(logits, min_p, min_tokens_to_keep=1):
    if not 0.0 <= min_p <= 1.0:
        raise ValueError("min_p must be in [0, 1]")
    probs = torch.softmax(logits.float() if logits.dtype != torch.float64 else logits, dim=-1)
    keep = probs >= min_p * probs.amax(dim=-1, keepdim=True)
    return logits.masked_fill(~keep, float("-inf"))
