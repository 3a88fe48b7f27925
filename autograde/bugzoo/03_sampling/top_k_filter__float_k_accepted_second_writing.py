"""Origin: blind author 40 (shown only the student notebooks). Checks only k <= 0: a non-integer k such as 2.0 is silently accepted (int(k)); exploits 'k must be a positive int: for k <= 0 (or a non-integer) raise ValueError'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "top_k_filter"

import torch

def top_k_filter(logits: torch.Tensor, k: int) -> torch.Tensor:
    if k <= 0:
        raise ValueError("k must be a positive integer")
    k = min(int(k), logits.shape[-1])
    tau = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < tau, float("-inf"))
