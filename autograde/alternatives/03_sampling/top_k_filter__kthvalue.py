"""The k-th largest value via kthvalue of the negated logits; ties at the k-th value are kept."""
import torch

TARGET = "top_k_filter"


def top_k_filter(logits, k):
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    if k >= logits.shape[-1]:
        return logits.clone()
    kth = -(-logits).kthvalue(k, dim=-1, keepdim=True).values
    return logits.masked_fill(logits < kth, float("-inf"))
