"""Origin: blind author 40 (shown only the student notebooks). T = 0 puts all mass on argmax() alone: ties are not split evenly; exploits 'Ties: if several entries share the maximum, split the probability evenly'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "probs_at_temperature"

import torch

def probs_at_temperature(logits: torch.Tensor, T: float) -> torch.Tensor:
    if T < 0:
        raise ValueError("temperature must be >= 0")
    if T == 0:
        return torch.zeros_like(logits).scatter(-1, logits.argmax(-1, keepdim=True), 1.0)
    return softmax(logits / T)
