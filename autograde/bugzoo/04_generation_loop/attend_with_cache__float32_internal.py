"""Origin: blind author 40 (shown only the student notebooks). Computes the attention in float32 and casts back: float64 inputs lose accuracy; exploits 'float64 inputs need float64 accuracy (compute in their dtype)'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "attend_with_cache"

import math
import torch

def attend_with_cache(q, k_new, v_new, k_cache, v_cache):
    k_all = torch.cat([k_cache, k_new], dim=2)
    v_all = torch.cat([v_cache, v_new], dim=2)
    g = q.shape[1] // k_all.shape[1]
    k, v = k_all.repeat_interleave(g, dim=1).float(), v_all.repeat_interleave(g, dim=1).float()
    T, past = q.shape[2], k_cache.shape[2]
    s = q.float() @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    i = torch.arange(T, device=q.device)[:, None] + past
    j = torch.arange(past + T, device=q.device)[None, :]
    s = s.masked_fill(j > i, float("-inf"))
    return (torch.softmax(s, dim=-1) @ v).to(q.dtype), k_all, v_all
