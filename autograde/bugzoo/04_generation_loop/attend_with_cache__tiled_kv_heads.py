"""Origin: blind author 40 (shown only the student notebooks). Expands KV heads with repeat (tiling 0,1,2,0,1,2) instead of repeat_interleave: right when n_kv = 1 or n_head = n_kv; exploits 'query head h reads KV head h // group ... tiling them ... is the classic wrong mapping'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "attend_with_cache"

import math
import torch

def attend_with_cache(q, k_new, v_new, k_cache, v_cache):
    k_all = torch.cat([k_cache, k_new], dim=2)
    v_all = torch.cat([v_cache, v_new], dim=2)
    g = q.shape[1] // k_all.shape[1]
    k, v = k_all.repeat(1, g, 1, 1), v_all.repeat(1, g, 1, 1)
    T, past = q.shape[2], k_cache.shape[2]
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    i = torch.arange(T, device=q.device)[:, None] + past
    j = torch.arange(past + T, device=q.device)[None, :]
    s = s.masked_fill(j > i, float("-inf"))
    return torch.softmax(s, dim=-1) @ v, k_all, v_all
