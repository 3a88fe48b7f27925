"""Origin: blind author 40 (shown only the student notebooks). Subtracts the row maximum in place (logits.sub_), changing the caller's tensor; exploits 'does not modify its input (no in-place operations on logits)'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "softmax"

import torch

def softmax(logits: torch.Tensor) -> torch.Tensor:
    logits.sub_(logits.amax(dim=-1, keepdim=True))
    e = torch.exp(logits)
    return e / e.sum(dim=-1, keepdim=True)
