"""Red team 14 (uma04): attention reads only the last 24 cached positions (a sliding window nobody asked for);
k_all and v_all are still the whole cache. Hidden cases had at most 20 cached positions.

Formerly `attend_with_cache__rt14_last24_cached.py`."""
import math

import torch

TARGET = "attend_with_cache"


def attend_with_cache(q, k_new, v_new, k_cache, v_cache):
    k_all = torch.cat([k_cache, k_new], dim=2)
    v_all = torch.cat([v_cache, v_new], dim=2)
    T, hd = q.shape[2], q.shape[-1]
    keep = min(k_cache.shape[2], 24) + T                                # the last 24 cached + the new ones
    k_win, v_win = k_all[:, :, -keep:], v_all[:, :, -keep:]
    group = q.shape[1] // k_all.shape[1]
    k = k_win.repeat_interleave(group, dim=1)
    v = v_win.repeat_interleave(group, dim=1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(hd)
    allowed = torch.ones(T, keep, dtype=torch.bool, device=q.device).tril(diagonal=keep - T)
    scores = scores.masked_fill(~allowed, float("-inf"))
    return scores.softmax(dim=-1) @ v, k_all, v_all
