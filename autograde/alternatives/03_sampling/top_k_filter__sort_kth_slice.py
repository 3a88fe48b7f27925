"""Written by a blind honest student (class 6, h03a), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "top_k_filter"

def top_k_filter(logits, k):
    if type(k) is not int or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    k = min(k, logits.shape[-1])
    kth = logits.sort(dim=-1, descending=True).values[..., k - 1:k]
    return torch.where(logits >= kth, logits, torch.full_like(logits, float("-inf")))
