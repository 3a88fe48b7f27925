"""Written by a blind honest student (class 7, h03_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "top_k_filter"


def top_k_filter(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Keep every logit >= the k-th largest of its row (ties kept, as HF does); the rest become -inf."""
    if type(k) is not int or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    sorted_vals = torch.sort(logits, dim=-1, descending=True).values
    kth = sorted_vals[..., min(k, logits.shape[-1]) - 1].unsqueeze(-1)
    return torch.where(logits >= kth, logits, torch.full_like(logits, float("-inf")))
