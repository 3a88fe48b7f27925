"""No clamp: torch.topk raises for k > V.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "top_k_filter"


def top_k_filter(logits, k):
    if k <= 0:
        raise ValueError("k must be positive")
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float("-inf"))
