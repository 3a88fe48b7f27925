"""Written by a blind honest student (class 7, h03_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "greedy"


def greedy(logits: torch.Tensor) -> torch.Tensor:
    """The most likely token of each row: [..., V] logits -> [...] ids (ties: the lowest id)."""
    return logits.max(dim=-1).indices
