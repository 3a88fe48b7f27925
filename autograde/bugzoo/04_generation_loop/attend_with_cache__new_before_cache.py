"""Concatenates the new keys before the cached ones.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import math

import torch

from course_lib.generate import greedy

TARGET = "attend_with_cache"


def attend_with_cache(q, k_new, v_new, k_cache, v_cache):
    """Append this step's keys/values to the cache and attend (causal, grouped-query); return (y, k_all, v_all)."""
    k_all = torch.cat([k_new, k_cache], dim=2)                          # (B, nkv, S, hd)
    v_all = torch.cat([v_new, v_cache], dim=2)                          # (B, nkv, S, hd)
    T, S, hd = q.shape[2], k_all.shape[2], q.shape[-1]
    group = q.shape[1] // k_all.shape[1]
    k = k_all.repeat_interleave(group, dim=1)                           # (B, nh, S, hd)
    v = v_all.repeat_interleave(group, dim=1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(hd)                    # (B, nh, T, S)
    past = S - T
    allowed = torch.ones(T, S, dtype=torch.bool, device=q.device).tril(diagonal=past)   # query i sees 0..past+i
    scores = scores.masked_fill(~allowed, float("-inf"))
    y = scores.softmax(dim=-1) @ v                                      # (B, nh, T, hd)
    return y, k_all, v_all
