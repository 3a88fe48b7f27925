"""Written by a blind honest student (class 7, h03_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "min_p_filter"


def min_p_filter(logits: torch.Tensor, min_p: float, min_tokens_to_keep: int = 1) -> torch.Tensor:
    """Keep tokens whose probability is >= min_p times the row's top probability."""
    if not 0 <= min_p <= 1:
        raise ValueError("min_p must be in [0, 1]")
    if not isinstance(min_tokens_to_keep, int) or isinstance(min_tokens_to_keep, bool) or min_tokens_to_keep < 1:
        raise ValueError("min_tokens_to_keep must be a positive integer")
    z = logits.double()
    zmax = z.amax(dim=-1, keepdim=True)
    keep = z >= zmax + math.log(min_p) if min_p > 0 else torch.ones_like(z, dtype=torch.bool)
    ranks = torch.argsort(torch.argsort(z, dim=-1, descending=True, stable=True), dim=-1)
    keep = keep | (ranks < min_tokens_to_keep)
    return logits.masked_fill(~keep, float("-inf"))
