"""Written by a blind honest student (class 7, h02_alt3), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "probs_at_temperature"


def probs_at_temperature(logits: torch.Tensor, T: float) -> torch.Tensor:
    """softmax(logits / T) along the last dim; T = 0 gives the greedy one-hot (ties split evenly)."""
    if T < 0:
        raise ValueError("the temperature must be >= 0 (0 means greedy)")
    if T == 0:
        mask = logits == logits.amax(-1, keepdim=True)
        probs = mask.to(logits.dtype)
        return probs / probs.sum(-1, keepdim=True)
    scaled = logits / T
    return softmax(scaled)
