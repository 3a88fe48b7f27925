"""Written by a blind honest student (class 7, h02_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "softmax"


def softmax(logits: torch.Tensor) -> torch.Tensor:
    """Numerically stable softmax along the last dimension."""
    x = logits.to(torch.float64)
    x = x - x.max(dim=-1, keepdim=True).values
    e = x.exp()
    return (e / e.sum(dim=-1, keepdim=True)).to(logits.dtype)
