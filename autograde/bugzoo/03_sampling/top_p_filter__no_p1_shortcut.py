"""Red team 15: no `p == 1` shortcut: the nucleus is computed even at p = 1, and a token whose probability
underflows the cumulative sum (the mass before it is already 1.0) is dropped. The visible check's 4e-18 case
caught it; the hidden set did not.

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `top_p_filter__rt15_no_p1_shortcut.py`."""
import torch

TARGET = "top_p_filter"


def top_p_filter(logits, p, min_tokens_to_keep=1):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"top-p needs 0 <= p <= 1, got {p!r}")
    if isinstance(min_tokens_to_keep, bool) or not isinstance(min_tokens_to_keep, int) or min_tokens_to_keep < 1:
        raise ValueError(f"min_tokens_to_keep must be a positive integer, got {min_tokens_to_keep!r}")
    x = logits.double() if logits.dtype == torch.float64 else logits.float()
    sorted_x, order = torch.sort(x, dim=-1, descending=True, stable=True)
    probs = torch.softmax(sorted_x, dim=-1)
    mass_before = probs.cumsum(dim=-1) - probs
    keep_sorted = mass_before < p
    keep_sorted[..., :min_tokens_to_keep] = True
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))
