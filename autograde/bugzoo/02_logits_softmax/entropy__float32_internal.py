"""Origin: blind author 40 (shown only the student notebooks). Computes in float32 and casts back: float64 near-one-hot distributions lose their tiny entropy; exploits the hidden 'float64, near-one-hot distributions'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "entropy"

import torch

def entropy(probs: torch.Tensor) -> torch.Tensor:
    p = probs.float()
    terms = torch.where(p > 0, p * torch.log(p), torch.zeros_like(p))
    return (-terms.sum(-1)).to(probs.dtype)
