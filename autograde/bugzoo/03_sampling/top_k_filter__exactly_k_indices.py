"""Origin: blind author 40 (shown only the student notebooks). Keeps exactly the k topk indices (scatter), dropping tokens tied with the k-th value; exploits 'keep every token with z_i >= tau. So [5, 4, 4, 1] with k = 2 keeps three tokens'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "top_k_filter"

import torch

def top_k_filter(logits: torch.Tensor, k: int) -> torch.Tensor:
    if not isinstance(k, int) or k <= 0:
        raise ValueError("k must be a positive integer")
    k = min(k, logits.shape[-1])
    keep = torch.zeros_like(logits, dtype=torch.bool).scatter(-1, torch.topk(logits, k, dim=-1).indices, True)
    return logits.masked_fill(~keep, float("-inf"))
