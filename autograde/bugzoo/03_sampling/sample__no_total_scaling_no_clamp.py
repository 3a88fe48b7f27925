"""Origin: blind author 40 (shown only the student notebooks). Neither scales u by the row's total nor clamps: a row summing to 1 - 1e-7 can return id V (out of range); exploits 'each row ... summing to 1 up to rounding' and 'what must happen if rounding leaves u at or above the last c_i?'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "sample"

import torch

def sample(probs: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    c = probs.double().cumsum(-1)
    u = torch.rand(probs.shape[:-1], generator=generator, dtype=torch.float64, device=probs.device).unsqueeze(-1)
    return (c <= u).sum(-1)
