"""Origin: blind author 40 (shown only the student notebooks). Always keeps only the top-1 fallback, ignoring min_tokens_to_keep > 1; exploits 'also keep the min_tokens_to_keep most likely'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "min_p_filter"

import torch

def min_p_filter(logits: torch.Tensor, min_p: float, min_tokens_to_keep: int = 1) -> torch.Tensor:
    if not 0 <= min_p <= 1 or not isinstance(min_tokens_to_keep, int) or min_tokens_to_keep < 1:
        raise ValueError("min_p must be in [0, 1] and min_tokens_to_keep a positive integer")
    probs = torch.softmax(logits.float(), dim=-1)
    keep = probs >= min_p * probs.amax(-1, keepdim=True)
    return logits.masked_fill(~keep, float("-inf"))
