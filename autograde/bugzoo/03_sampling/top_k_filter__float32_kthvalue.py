"""Threshold by kthvalue on logits.float() (blind class 7 wrote it as an honest answer; class 8 wrote the same
upcast as a bug): exact for float16/bfloat16, but a downcast for float64, where logits closer than float32 can
tell apart tie with the threshold and are kept. The text keeps logits >= the row's k-th largest, float64 a
supported dtype. Moved from autograde/alternatives in session 10.

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `top_k_filter__class7_float32_kthvalue.py`."""
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
