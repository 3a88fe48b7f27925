"""Origin: blind author 40 (shown only the student notebooks). Sums over every dimension: right for a single distribution, a scalar instead of [...] for batches; exploits 'input [..., V] -> output [...]'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "entropy"

import torch

def entropy(probs: torch.Tensor) -> torch.Tensor:
    terms = torch.where(probs > 0, probs * torch.log(probs), torch.zeros_like(probs))
    return -terms.sum()
