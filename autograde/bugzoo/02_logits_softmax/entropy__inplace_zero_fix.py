"""Origin: blind author 40 (shown only the student notebooks). Replaces zeros by ones in place before the log (log 1 = 0 trick), corrupting the caller's probabilities; exploits 'Input not modified' with exact zeros.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "entropy"

import torch

def entropy(probs: torch.Tensor) -> torch.Tensor:
    zero = probs == 0
    probs[zero] = 1.0
    h = -(torch.where(zero, torch.zeros_like(probs), probs) * torch.log(probs)).sum(-1)
    return h
