"""Written by a blind honest student (class 7, h03_alt3), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "greedy"


def greedy(logits: torch.Tensor) -> torch.Tensor:
    """The most likely token of each row: [..., V] logits -> [...] ids (ties: the lowest id)."""
    flat = logits.reshape(-1, logits.shape[-1])
    out = torch.tensor([int(torch.argmax(row)) for row in flat], dtype=torch.long, device=logits.device)
    return out.reshape(logits.shape[:-1])
