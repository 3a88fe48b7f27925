"""One threshold for the whole batch (topk of the flattened tensor).

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "top_k_filter"


def top_k_filter(logits, k):
    if k <= 0:
        raise ValueError("k must be positive")
    k = min(k, logits.shape[-1])
    kth = torch.topk(logits.reshape(-1), k).values[-1]
    return logits.masked_fill(logits < kth, float("-inf"))
