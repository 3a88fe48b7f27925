"""Origin: blind author 40 (shown only the student notebooks). Uses masked_fill_ (in place) for the T = 0 mask: the caller's logits are overwritten with -inf; exploits 'input untouched' at T = 0.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "apply_temperature"

import torch

def apply_temperature(logits: torch.Tensor, T: float) -> torch.Tensor:
    if T < 0:
        raise ValueError("temperature must be >= 0")
    if T == 0:
        return logits.masked_fill_(logits != logits.amax(-1, keepdim=True), float("-inf"))
    return logits / T
