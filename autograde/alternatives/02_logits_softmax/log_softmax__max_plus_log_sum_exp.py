"""Written by a blind honest student (class 7, h02_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "log_softmax"


def log_softmax(logits: torch.Tensor) -> torch.Tensor:
    """Numerically stable log-softmax along the last dimension."""
    m = logits.max(dim=-1, keepdim=True).values
    lse = m + (logits - m).exp().sum(dim=-1, keepdim=True).log()
    return logits - lse
