"""Origin: blind author 40 (shown only the student notebooks). Uses torch.multinomial(probs, 1, generator=...).squeeze(-1): fine for [V] and [B, V], fails for [B, T, V]; exploits 'probs is [..., V]' and 'shape [...]'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "sample"

import torch

def sample(probs: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    return torch.multinomial(probs, 1, generator=generator).squeeze(-1)
