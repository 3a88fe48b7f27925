"""Origin: blind author 40 (shown only the student notebooks). Never raises for T < 0 (divides by the negative T and returns reversed probabilities); exploits 'T < 0: raise ValueError'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "probs_at_temperature"

import torch

def probs_at_temperature(logits: torch.Tensor, T: float) -> torch.Tensor:
    if T == 0:
        top = (logits == logits.amax(-1, keepdim=True)).to(logits.dtype)
        return top / top.sum(-1, keepdim=True)
    return softmax(logits / T)
