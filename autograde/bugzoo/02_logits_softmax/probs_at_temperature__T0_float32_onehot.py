"""Origin: blind author 40 (shown only the student notebooks). Builds the T = 0 distribution with torch.zeros(shape) (float32 default): float64 input gets a float32 result; exploits 'a float64 input gets float64 accuracy: every step in its dtype, the T = 0 case too'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "probs_at_temperature"

import torch

def probs_at_temperature(logits: torch.Tensor, T: float) -> torch.Tensor:
    if T < 0:
        raise ValueError("temperature must be >= 0")
    if T == 0:
        top = torch.zeros(logits.shape)
        top[logits == logits.amax(-1, keepdim=True)] = 1.0
        return top / top.sum(-1, keepdim=True)
    return softmax(logits / T)
