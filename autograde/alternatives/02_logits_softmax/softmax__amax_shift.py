"""Written by a blind honest student (class 7, h02_alt3), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "softmax"


def softmax(logits: torch.Tensor) -> torch.Tensor:
    """Numerically stable softmax along the last dimension."""
    shifted = logits - torch.amax(logits, dim=-1, keepdim=True)
    num = torch.exp(shifted)
    den = torch.sum(num, dim=-1, keepdim=True)
    return num / den
