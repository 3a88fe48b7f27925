"""Written by a blind honest student (class 7, h02_alt2), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "entropy"


def entropy(probs: torch.Tensor) -> torch.Tensor:
    """Shannon entropy in nats along the last dim, with 0 * log 0 = 0."""
    terms = probs * torch.log(probs)
    terms = torch.where(probs == 0, torch.zeros_like(terms), terms)
    return -terms.sum(dim=-1)
