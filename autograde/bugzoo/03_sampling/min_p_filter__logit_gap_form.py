"""Origin: blind author 40 (shown only the student notebooks). Uses the logit form z_i >= z_max + log(min_p): rounds differently for a token exactly at the threshold; exploits 'compared as probabilities ... not the logit form above'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "min_p_filter"

import math
import torch

def min_p_filter(logits: torch.Tensor, min_p: float, min_tokens_to_keep: int = 1) -> torch.Tensor:
    if not 0 <= min_p <= 1 or not isinstance(min_tokens_to_keep, int) or min_tokens_to_keep < 1:
        raise ValueError("min_p must be in [0, 1] and min_tokens_to_keep a positive integer")
    if min_p == 0:
        return logits.clone()
    z = logits.float()
    keep = z >= z.amax(-1, keepdim=True) + math.log(min_p)
    idx = torch.topk(z, min(min_tokens_to_keep, z.shape[-1]), dim=-1).indices
    keep = keep.scatter(-1, idx, True)
    return logits.masked_fill(~keep, float("-inf"))
