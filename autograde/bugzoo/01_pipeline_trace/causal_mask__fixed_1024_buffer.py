"""Origin: blind author 40 (shown only the student notebooks). Slices a precomputed 1024x1024 lower triangle (GPT-2 style buffer): returns a too-small mask for T > 1024; exploits 'causal_mask(T)' for any T.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "causal_mask"

import torch

_TRIL = torch.ones(1024, 1024, dtype=torch.bool).tril()

def causal_mask(T: int) -> torch.Tensor:
    return _TRIL[:T, :T]
