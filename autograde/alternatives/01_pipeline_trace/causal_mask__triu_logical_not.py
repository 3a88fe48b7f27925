"""Written by a blind honest student (class 6, h01b), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "causal_mask"

def causal_mask(T: int) -> torch.Tensor:
    return torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1).logical_not()
