"""Origin: blind class 6 (pt_tiny).

treats any T < 1e-4 as greedy (the text: any T > 0 for which logits / T is finite, including tiny ones such as 1e-6).

From a blind class (class 6); it kept its points until the hidden case named after it. Runs in the notebook's namespace.

Formerly `probs_at_temperature__class6_pt_tiny.py`."""
import math
import torch

TARGET = "probs_at_temperature"

def probs_at_temperature(logits: torch.Tensor, T: float) -> torch.Tensor:
    """softmax(logits / T) along the last dim; T = 0 gives the greedy one-hot (ties split evenly)."""
    if T < 0:
        raise ValueError("the temperature must be >= 0")
    if T < 1e-4:
        top = (logits == logits.amax(dim=-1, keepdim=True)).to(logits.dtype)
        return top / top.sum(dim=-1, keepdim=True)
    return softmax(logits / T)
