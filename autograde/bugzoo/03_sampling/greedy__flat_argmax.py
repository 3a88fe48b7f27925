"""Origin: blind author 40 (shown only the student notebooks). Calls logits.argmax() without dim: right for [V], a flat index into the whole batch for [B, V]; exploits 'Works on [V], [B, V] and any batch shape'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "greedy"

import torch

def greedy(logits: torch.Tensor) -> torch.Tensor:
    if logits.dim() == 1:
        return logits.argmax()
    return torch.stack([logits.reshape(-1, logits.shape[-1]).argmax()] * logits.shape[:-1].numel()).reshape(logits.shape[:-1])
