"""Origin: blind author 40 (shown only the student notebooks). Computes in float32 and casts back: float64 inputs lose precision (e.g. tiny gaps); exploits 'same contract as softmax (... dtype kept)' and 'float64' hidden cases.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "log_softmax"

import torch

def log_softmax(logits: torch.Tensor) -> torch.Tensor:
    x = logits.float()
    s = x - x.amax(dim=-1, keepdim=True)
    return (s - torch.log(torch.exp(s).sum(dim=-1, keepdim=True))).to(logits.dtype)
