"""p_max of the whole batch instead of each row.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "min_p_filter"


def min_p_filter(logits, min_p, min_tokens_to_keep=1):
    if not 0.0 <= min_p <= 1.0:
        raise ValueError("min_p must be in [0, 1]")
    x = logits.float() if logits.dtype != torch.float64 else logits
    probs = torch.softmax(x, dim=-1)
    keep = probs >= min_p * probs.max()
    top = torch.topk(x, min(min_tokens_to_keep, x.shape[-1]), dim=-1).indices
    keep = keep.scatter(-1, top, True)
    return logits.masked_fill(~keep, float("-inf"))
