"""Origin: blind author 40 (shown only the student notebooks). Computes softmax(z)**(1/T) renormalised (equal in exact maths): for tiny T every power underflows to 0 -> NaN; exploits 'including tiny ones such as 1e-6 (think: what overflows?)'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "probs_at_temperature"

import torch

def probs_at_temperature(logits: torch.Tensor, T: float) -> torch.Tensor:
    if T < 0:
        raise ValueError("temperature must be >= 0")
    if T == 0:
        top = (logits == logits.amax(-1, keepdim=True)).to(logits.dtype)
        return top / top.sum(-1, keepdim=True)
    q = softmax(logits) ** (1.0 / T)
    return q / q.sum(-1, keepdim=True)
