"""Written by a blind honest student (class 7, h04_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "attend_with_cache"


def attend_with_cache(q: torch.Tensor, k_new: torch.Tensor, v_new: torch.Tensor, k_cache: torch.Tensor,
                      v_cache: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Append this step's keys/values to the cache and attend (causal, grouped-query); return (y, k_all, v_all)."""
    k_all = torch.cat((k_cache, k_new), dim=-2)
    v_all = torch.cat((v_cache, v_new), dim=-2)
    B, H, T, hd = q.shape
    n_kv, S = k_all.shape[1], k_all.shape[2]
    g = H // n_kv
    k = k_all[:, :, None].expand(B, n_kv, g, S, hd).reshape(B, H, S, hd)
    v = v_all[:, :, None].expand(B, n_kv, g, S, hd).reshape(B, H, S, hd)
    s = (q.double() @ k.double().transpose(-1, -2)) / math.sqrt(hd)
    allowed = torch.ones(T, S, dtype=torch.bool, device=q.device).tril(diagonal=S - T)
    s = s.masked_fill(~allowed, float("-inf"))
    y = (s.softmax(dim=-1) @ v.double()).to(q.dtype)
    return y, k_all, v_all
