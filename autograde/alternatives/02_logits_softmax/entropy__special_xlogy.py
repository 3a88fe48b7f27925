"""Written by a blind honest student (class 7, h02_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "entropy"


def entropy(probs: torch.Tensor) -> torch.Tensor:
    """Shannon entropy in nats along the last dim, with 0 * log 0 = 0."""
    return -torch.special.xlogy(probs, probs).sum(dim=-1)
