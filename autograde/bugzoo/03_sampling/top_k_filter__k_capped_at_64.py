"""Red team 14: k is capped at 64 (every hidden case had k <= 64), so top-k = 300 keeps only 64 tokens.

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `top_k_filter__rt14_k_capped_64.py`."""
import torch

TARGET = "top_k_filter"


def top_k_filter(logits, k):
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive int, got {k!r}")
    k = min(k, 64, logits.shape[-1])
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float("-inf"))
