"""Blind class 9: the attention computed in float32 whatever the inputs' dtype, the result cast back: float64
inputs get float32 accuracy (~1e-7), which the text rules out ("float64 inputs: float64 accuracy").

Formerly `attend_with_cache__class9_float32_inside.py`."""
import math

import torch

TARGET = "attend_with_cache"


def attend_with_cache(q, k_new, v_new, k_cache, v_cache):
    k_all = torch.cat([k_cache, k_new], dim=2)
    v_all = torch.cat([v_cache, v_new], dim=2)
    T, S, hd = q.shape[2], k_all.shape[2], q.shape[-1]
    group = q.shape[1] // k_all.shape[1]
    k = k_all.repeat_interleave(group, dim=1).float()
    v = v_all.repeat_interleave(group, dim=1).float()
    scores = q.float() @ k.transpose(-2, -1) / math.sqrt(hd)
    allowed = torch.ones(T, S, dtype=torch.bool, device=q.device).tril(diagonal=S - T)
    y = scores.masked_fill(~allowed, float("-inf")).softmax(dim=-1) @ v
    return y.to(q.dtype), k_all, v_all
