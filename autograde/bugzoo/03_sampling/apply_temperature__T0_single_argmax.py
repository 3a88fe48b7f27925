"""Origin: blind author 40 (shown only the student notebooks). At T = 0 keeps only the argmax index (scatter): tied maxima other than the first become -inf; exploits 'several tied maxima all keep their value'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "apply_temperature"

import torch

def apply_temperature(logits: torch.Tensor, T: float) -> torch.Tensor:
    if T < 0:
        raise ValueError("temperature must be >= 0")
    if T == 0:
        keep = torch.zeros_like(logits, dtype=torch.bool).scatter(-1, logits.argmax(-1, keepdim=True), True)
        return logits.masked_fill(~keep, float("-inf"))
    return logits / T
