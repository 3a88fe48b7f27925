"""Origin: blind author 40 (shown only the student notebooks). Computes in float32 and casts back: float64 in gives float64 dtype but only float32 accuracy; exploits 'float64 in -> float64 out'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "softmax"

import torch

def softmax(logits: torch.Tensor) -> torch.Tensor:
    x = logits.float()
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return (e / e.sum(dim=-1, keepdim=True)).to(logits.dtype)
