"""Red team 14: above 4096 tokens, at most 256 tokens survive min-p (a top-256 pre-filter; every hidden row had
at most ~4096 tokens, and no case kept more than 256).

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `min_p_filter__rt14_at_most_256.py`."""
import torch

TARGET = "min_p_filter"


def min_p_filter(logits, min_p, min_tokens_to_keep=1):
    if not 0 <= min_p <= 1:
        raise ValueError(f"min_p must be in [0, 1], got {min_p}")
    if isinstance(min_tokens_to_keep, bool) or not isinstance(min_tokens_to_keep, int) or min_tokens_to_keep < 1:
        raise ValueError(f"min_tokens_to_keep must be a positive int, got {min_tokens_to_keep!r}")
    probs = torch.softmax(logits.float(), dim=-1)
    keep = probs >= min_p * probs.amax(dim=-1, keepdim=True)
    m = min(min_tokens_to_keep, logits.shape[-1])
    top = torch.topk(probs, m, dim=-1).indices
    keep = keep.scatter(-1, top, True)
    if logits.shape[-1] > 4096:
        cap = torch.topk(probs, 256, dim=-1).indices
        keep = keep & torch.zeros_like(keep).scatter(-1, cap, True)
    return logits.masked_fill(~keep, float("-inf"))
