"""Written by a blind honest student (class 6, h04b), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "attend_with_cache"

def attend_with_cache(q, k_new, v_new, k_cache, v_cache):
    k_all = torch.cat([k_cache, k_new], 2)
    v_all = torch.cat([v_cache, v_new], 2)
    B, H, T, hd = q.shape
    nkv, L = k_all.shape[1], k_all.shape[2]
    g = H // nkv
    k = k_all[:, :, None].expand(B, nkv, g, L, hd).reshape(B, H, L, hd)
    v = v_all[:, :, None].expand(B, nkv, g, L, hd).reshape(B, H, L, hd)
    s = (q.double() @ k.double().transpose(-1, -2)) / math.sqrt(hd)
    qpos = torch.arange(L - T, L, device=q.device)
    kpos = torch.arange(L, device=q.device)
    s = s.masked_fill(kpos[None, :] > qpos[:, None], -math.inf)
    y = (torch.softmax(s, -1) @ v.double()).to(q.dtype)
    return y, k_all, v_all
