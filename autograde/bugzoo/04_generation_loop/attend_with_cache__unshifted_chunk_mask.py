"""Origin: blind author 40 (shown only the student notebooks). No mask for T = 1 and a T x (past+T) lower triangle anchored at key 0 otherwise: right for decode (T = 1) and prefill (past = 0), wrong for a chunk after a cache; exploits 'for a chunk in between, the triangle is shifted by past'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "attend_with_cache"

import math
import torch

def attend_with_cache(q, k_new, v_new, k_cache, v_cache):
    k_all = torch.cat([k_cache, k_new], dim=2)
    v_all = torch.cat([v_cache, v_new], dim=2)
    g = q.shape[1] // k_all.shape[1]
    k, v = k_all.repeat_interleave(g, dim=1), v_all.repeat_interleave(g, dim=1)
    T = q.shape[2]
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if T > 1:
        mask = torch.ones(T, k.shape[2], dtype=torch.bool, device=q.device).tril()
        s = s.masked_fill(~mask, float("-inf"))
    return torch.softmax(s, dim=-1) @ v, k_all, v_all
