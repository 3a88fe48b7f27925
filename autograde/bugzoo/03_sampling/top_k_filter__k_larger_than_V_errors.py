"""Origin: blind author 40 (shown only the student notebooks). Calls torch.topk(logits, k) without capping k: k > V raises instead of keeping everything; exploits 'k >= V keeps everything (no error)'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "top_k_filter"

import torch

def top_k_filter(logits: torch.Tensor, k: int) -> torch.Tensor:
    if not isinstance(k, int) or k <= 0:
        raise ValueError("k must be a positive integer")
    tau = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < tau, float("-inf"))
