"""Top-p that keeps the *highest*-id token among several tied at the cut (a different, equally correct choice)."""
import torch

TARGET = "top_p_filter"


def top_p_filter(logits, p, min_tokens_to_keep=1):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p!r}")
    if isinstance(min_tokens_to_keep, bool) or not isinstance(min_tokens_to_keep, int) or min_tokens_to_keep < 1:
        raise ValueError(f"min_tokens_to_keep must be a positive integer, got {min_tokens_to_keep!r}")
    if p == 1.0:
        return logits.clone()
    V = logits.shape[-1]
    x = logits.double() if logits.dtype == torch.float64 else logits.float()
    flipped = x.flip(-1)                                        # ties now sort highest id first
    sorted_x, order = torch.sort(flipped, dim=-1, descending=True, stable=True)
    order = V - 1 - order
    probs = torch.softmax(sorted_x, dim=-1)
    keep_sorted = (probs.cumsum(dim=-1) - probs) < p
    keep_sorted[..., :min_tokens_to_keep] = True
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))
