"""Origin: blind author 40 (shown only the student notebooks). Uses the largest probability of the whole batch as p_max: a flat row next to a confident one loses tokens; exploits 'Per row ... the row's top probability'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "min_p_filter"

import torch

def min_p_filter(logits: torch.Tensor, min_p: float, min_tokens_to_keep: int = 1) -> torch.Tensor:
    if not 0 <= min_p <= 1 or not isinstance(min_tokens_to_keep, int) or min_tokens_to_keep < 1:
        raise ValueError("min_p must be in [0, 1] and min_tokens_to_keep a positive integer")
    probs = torch.softmax(logits.float(), dim=-1)
    keep = probs >= min_p * probs.max()
    idx = torch.topk(probs, min(min_tokens_to_keep, probs.shape[-1]), dim=-1).indices
    keep = keep.scatter(-1, idx, True)
    return logits.masked_fill(~keep, float("-inf"))
