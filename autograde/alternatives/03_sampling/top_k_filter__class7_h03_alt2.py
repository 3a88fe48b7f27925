"""Written by a blind honest student (class 7, h03_alt2), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "top_k_filter"


def top_k_filter(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Keep every logit >= the k-th largest of its row (ties kept, as HF does); the rest become -inf."""
    if not isinstance(k, int) or isinstance(k, bool) or k <= 0:
        raise ValueError("k must be a positive integer")
    V = logits.shape[-1]
    if k >= V:
        return logits.clone()
    thr = torch.kthvalue(logits.float(), V - k + 1, dim=-1, keepdim=True).values
    return logits.masked_fill(logits.float() < thr, float("-inf"))
