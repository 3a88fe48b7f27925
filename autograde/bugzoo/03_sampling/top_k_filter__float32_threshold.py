"""Finds and compares the k-th largest logit in float32 (blind class 8): float64 logits closer than float32
can tell apart tie with the threshold and are kept. The text keeps logits >= the row's k-th largest, float64 a
supported dtype.

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `top_k_filter__class8_float32_threshold.py`."""
import math

import torch

TARGET = "top_k_filter"


def top_k_filter(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Keep every logit >= the k-th largest of its row (ties kept, as HF does); the rest become -inf."""
    if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
        raise ValueError("k must be a positive integer")
    V = logits.shape[-1]
    if k >= V:
        return logits.clone()
    z = logits.float()
    thr = torch.topk(z, k, dim=-1).values[..., -1:]
    return logits.masked_fill(z < thr, float("-inf"))
