"""Red team 14 (vera04): KV heads expanded in a row (h // group) only for groups of at most 4; larger groups are
tiled (query head h reads KV head h % n_kv). Hidden cases had groups 1-4; a group of 9 over one KV head cannot
show it (tiling one head is the same), 16 query heads over 2 KV heads (group 8) or 15 over 3 (group 5) do.

Formerly `attend_with_cache__rt14_tile_big_groups.py`."""
import math

import torch

TARGET = "attend_with_cache"


def attend_with_cache(q, k_new, v_new, k_cache, v_cache):
    k_all = torch.cat([k_cache, k_new], dim=2)
    v_all = torch.cat([v_cache, v_new], dim=2)
    T, S, hd = q.shape[2], k_all.shape[2], q.shape[-1]
    group = q.shape[1] // k_all.shape[1]
    if group <= 4:
        k, v = k_all.repeat_interleave(group, dim=1), v_all.repeat_interleave(group, dim=1)
    else:
        k, v = k_all.repeat(1, group, 1, 1), v_all.repeat(1, group, 1, 1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(hd)
    allowed = torch.ones(T, S, dtype=torch.bool, device=q.device).tril(diagonal=S - T)
    scores = scores.masked_fill(~allowed, float("-inf"))
    return scores.softmax(dim=-1) @ v, k_all, v_all
