"""Written by a blind honest student (class 7, h04_alt3), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "attend_with_cache"


def attend_with_cache(q: torch.Tensor, k_new: torch.Tensor, v_new: torch.Tensor, k_cache: torch.Tensor,
                      v_cache: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Append this step's keys/values to the cache and attend (causal, grouped-query); return (y, k_all, v_all)."""
    k_all = torch.cat([k_cache, k_new], dim=2)
    v_all = torch.cat([v_cache, v_new], dim=2)
    n_head, n_kv = q.shape[1], k_all.shape[1]
    head_map = torch.arange(n_head, device=q.device) // (n_head // n_kv)
    k = k_all.index_select(1, head_map)
    v = v_all.index_select(1, head_map)
    T, past = q.shape[2], k_cache.shape[2]
    scores = torch.matmul(q, k.transpose(2, 3)) / q.shape[-1] ** 0.5
    blocked = torch.ones(T, past + T, dtype=torch.bool, device=q.device).triu(diagonal=past + 1)
    scores = scores.masked_fill(blocked, float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), v), k_all, v_all
