"""Origin: blind author 40 (shown only the student notebooks). Writes -inf into the caller's logits (logits[mask] = -inf) and returns them; exploits 'return a new tensor ... never modify logits in place'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "top_k_filter"

import torch

def top_k_filter(logits: torch.Tensor, k: int) -> torch.Tensor:
    if not isinstance(k, int) or k <= 0:
        raise ValueError("k must be a positive integer")
    if k >= logits.shape[-1]:
        return logits.clone()
    tau = torch.topk(logits, k, dim=-1).values[..., -1:]
    logits[logits < tau] = float("-inf")
    return logits
