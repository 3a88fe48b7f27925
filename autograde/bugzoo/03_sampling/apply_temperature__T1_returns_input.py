"""Origin: blind author 40 (shown only the student notebooks). Returns the input object itself at T = 1 ('nothing to do'): not a new tensor, later in-place steps edit the caller's logits; exploits 'return logits / T (a new tensor, dtype kept)'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "apply_temperature"

import torch

def apply_temperature(logits: torch.Tensor, T: float) -> torch.Tensor:
    if T < 0:
        raise ValueError("temperature must be >= 0")
    if T == 0:
        return logits.masked_fill(logits != logits.amax(-1, keepdim=True), float("-inf"))
    if T == 1:
        return logits
    return logits / T
