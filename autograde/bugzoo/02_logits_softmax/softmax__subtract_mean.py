"""Origin: blind author 40 (shown only the student notebooks). Subtracts the row mean instead of the max: fine for [1000, 999], overflows when a row spans a wide range; exploits 'no NaN for [1000., 999.]' being only one case of the identity.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "softmax"

import torch

def softmax(logits: torch.Tensor) -> torch.Tensor:
    finite = torch.where(torch.isfinite(logits), logits, torch.zeros_like(logits))
    m = finite.sum(-1, keepdim=True) / torch.isfinite(logits).sum(-1, keepdim=True)
    e = torch.exp(logits - m)
    return e / e.sum(dim=-1, keepdim=True)
