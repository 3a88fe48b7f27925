"""Origin: blind author 40 (shown only the student notebooks). Draws a single u and uses it for every row: rows are not independent (identical rows always give the same id); exploits 'drawn independently for every row'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "sample"

import torch

def sample(probs: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    c = probs.double().cumsum(-1)
    u = torch.rand((), generator=generator, dtype=torch.float64).to(probs.device) * c[..., -1:]
    return (c <= u).sum(-1).clamp(max=probs.shape[-1] - 1)
