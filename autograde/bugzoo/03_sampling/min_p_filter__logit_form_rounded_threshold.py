"""Blind 38 (issue 38's blind author, who read only the notebook; caught after the cases of its last round): Uses the logit form z_i >= z_max + log(min_p), which the text forbids; it agrees except for tokens within rounding of the threshold; text: "compared as probabilities (a softmax computed in float32 or float64, not the logit form above)".

Runs in the notebook's namespace (its other functions are the reference ones)."""
import math

import torch

TARGET = "min_p_filter"


def min_p_filter(logits: torch.Tensor, min_p: float, min_tokens_to_keep: int = 1) -> torch.Tensor:
    """Keep tokens whose probability is >= min_p times the row's top probability."""
    if not 0 <= min_p <= 1:
        raise ValueError(f"min_p must be in [0, 1], got {min_p}")
    if isinstance(min_tokens_to_keep, bool) or not isinstance(min_tokens_to_keep, int) or min_tokens_to_keep < 1:
        raise ValueError("min_tokens_to_keep must be a positive integer")
    if min_p == 0:
        return logits.clone()
    z = logits.float() if logits.dtype != torch.float64 else logits
    keep = z >= z.max(dim=-1, keepdim=True).values + math.log(min_p)   # p_i / p_max = exp(z_i - z_max)
    order = torch.sort(z, dim=-1, descending=True).indices
    first = torch.zeros_like(keep).scatter(-1, order[..., :min_tokens_to_keep], True)
    return logits.masked_fill(~(keep | first), float("-inf"))
