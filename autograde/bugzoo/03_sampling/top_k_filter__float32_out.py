"""Computes in float32 and forgets to cast back: float16 in, float32 out.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "top_k_filter"


def top_k_filter(logits, k):
    if k <= 0:
        raise ValueError("k must be positive")
    x = logits.float()
    if k >= x.shape[-1]:
        return x
    kth = torch.topk(x, k, dim=-1).values[..., -1:]
    return x.masked_fill(x < kth, float("-inf"))
