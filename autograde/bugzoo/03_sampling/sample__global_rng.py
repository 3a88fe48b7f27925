"""Origin: blind author 40 (shown only the student notebooks). Draws u with torch.rand without the generator (global RNG): the same seed no longer gives the same tokens; exploits 'Draw with the torch.Generator that the caller passes in, never with the global seed'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "sample"

import torch

def sample(probs: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    c = probs.double().cumsum(-1)
    u = torch.rand(probs.shape[:-1], dtype=torch.float64, device=probs.device).unsqueeze(-1) * c[..., -1:]
    return (c <= u).sum(-1).clamp(max=probs.shape[-1] - 1)
