"""Computes in float64 and returns float64 whatever the inputs' dtype, which the text allows ("any float dtype
may come back, but float64 inputs need float64 accuracy"): must get full marks. (issue 38: a meta-device case
once asked for the inputs' dtype and refused it)"""
import math

import torch

TARGET = "attend_with_cache"


def attend_with_cache(q: torch.Tensor, k_new: torch.Tensor, v_new: torch.Tensor, k_cache: torch.Tensor,
                      v_cache: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Append the new keys/values to the cache and attend (causal, grouped-query) in float64."""
    k_all = torch.cat((k_cache, k_new), dim=2)
    v_all = torch.cat((v_cache, v_new), dim=2)
    group = q.shape[1] // k_all.shape[1]
    k = k_all.repeat_interleave(group, dim=1).double()
    v = v_all.repeat_interleave(group, dim=1).double()
    T, S = q.shape[2], k.shape[2]
    scores = q.double() @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    future = torch.ones(T, S, dtype=torch.bool, device=q.device).triu(S - T + 1)
    y = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1) @ v
    return y, k_all, v_all
