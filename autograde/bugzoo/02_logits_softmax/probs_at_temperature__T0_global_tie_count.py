"""Origin: blind author 40 (shown only the student notebooks). Splits T = 0 ties by the number of maxima in the whole batch, not per row; exploits 'any batch shape' with rows that differ.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "probs_at_temperature"

import torch

def probs_at_temperature(logits: torch.Tensor, T: float) -> torch.Tensor:
    if T < 0:
        raise ValueError("temperature must be >= 0")
    if T == 0:
        top = (logits == logits.amax(-1, keepdim=True)).to(logits.dtype)
        return top * (top.shape[:-1].numel() / top.sum())
    return softmax(logits / T)
