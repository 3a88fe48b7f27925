"""Written by a blind honest student (class 7, h03_alt2), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "min_p_filter"


def min_p_filter(logits: torch.Tensor, min_p: float, min_tokens_to_keep: int = 1) -> torch.Tensor:
    """Keep tokens whose probability is >= min_p times the row's top probability."""
    if min_p < 0 or min_p > 1:
        raise ValueError("min_p must be in [0, 1]")
    if isinstance(min_tokens_to_keep, bool) or not isinstance(min_tokens_to_keep, int) or min_tokens_to_keep < 1:
        raise ValueError("min_tokens_to_keep must be a positive integer")
    probs = torch.softmax(logits.double(), dim=-1)
    pmax = probs.max(dim=-1, keepdim=True).values
    keep = probs >= min_p * pmax
    order = probs.argsort(dim=-1, descending=True)
    first = order[..., :min(min_tokens_to_keep, logits.shape[-1])]
    keep = keep.scatter(-1, first, torch.ones_like(first, dtype=torch.bool))
    return logits.masked_fill(~keep, float("-inf"))
