"""The notes' line: writes -inf into the caller's logits.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "top_k_filter"


def top_k_filter(logits, k):
    if k <= 0:
        raise ValueError("k must be positive")
    k = min(k, logits.shape[-1])
    indices_to_remove = logits < torch.topk(logits, k)[0][..., -1, None]
    logits[indices_to_remove] = float("-inf")
    return logits
