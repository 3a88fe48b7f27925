"""Written by a blind honest student (class 7, h03_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "top_p_filter"


def top_p_filter(logits: torch.Tensor, p: float, min_tokens_to_keep: int = 1) -> torch.Tensor:
    """Keep the smallest set of most likely tokens whose probability reaches p (Holtzman et al. 2020)."""
    if p < 0 or p > 1:
        raise ValueError("p must lie in [0, 1]")
    if min_tokens_to_keep < 1:
        raise ValueError("min_tokens_to_keep must be at least 1")
    if p == 1:
        return logits.clone()
    sorted_logits, sorted_idx = torch.sort(logits.float(), dim=-1, descending=False)
    cum = sorted_logits.softmax(dim=-1).cumsum(dim=-1)
    remove = cum <= (1 - p)
    remove[..., -min_tokens_to_keep:] = False
    remove_orig = remove.scatter(-1, sorted_idx, remove)
    return logits.masked_fill(remove_orig, float("-inf"))
