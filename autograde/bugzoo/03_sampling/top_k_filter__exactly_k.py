"""Keeps exactly k tokens via topk indices: drops tokens tied with the k-th.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "top_k_filter"


def top_k_filter(logits, k):
    if k <= 0:
        raise ValueError("k must be positive")
    k = min(k, logits.shape[-1])
    idx = torch.topk(logits, k, dim=-1).indices
    keep = torch.zeros_like(logits, dtype=torch.bool).scatter(-1, idx, True)
    return logits.masked_fill(~keep, float("-inf"))
