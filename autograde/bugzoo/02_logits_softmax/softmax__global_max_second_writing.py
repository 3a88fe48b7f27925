"""Origin: blind author 40 (shown only the student notebooks). Subtracts the maximum of the whole tensor, not of each row: a row far below another underflows to 0/0 = NaN; exploits 'for any batch shape' and 'mixed scales per row'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "softmax"

import torch

def softmax(logits: torch.Tensor) -> torch.Tensor:
    e = torch.exp(logits - logits.max())
    return e / e.sum(dim=-1, keepdim=True)
