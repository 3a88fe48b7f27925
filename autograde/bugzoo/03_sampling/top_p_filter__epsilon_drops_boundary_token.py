"""Keeps token j only when M_j + 1e-6 < p: a token whose preceding mass is just below p is dropped (the text: keep when M_j < p). (blind class 10)

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `top_p_filter__class10_epsilon.py`."""
import torch

TARGET = "top_p_filter"


def top_p_filter(logits: torch.Tensor, p: float, min_tokens_to_keep: int = 1) -> torch.Tensor:
    """Keep the smallest set of most likely tokens whose probability reaches p (Holtzman et al. 2020)."""
    if not (0 <= p <= 1):
        raise ValueError("p must be in [0, 1]")
    if min_tokens_to_keep < 1:
        raise ValueError("min_tokens_to_keep must be >= 1")
    if p == 1:
        return logits.clone()
    probs = torch.softmax(logits.float(), dim=-1)
    sp, idx = torch.sort(probs, dim=-1, descending=True)
    cum = torch.cumsum(sp, dim=-1)
    before = torch.cat([torch.zeros_like(cum[..., :1]), cum[..., :-1]], dim=-1)
    keep_sorted = before + 1e-6 < p
    keep_sorted[..., :min_tokens_to_keep] = True
    keep = torch.zeros_like(keep_sorted).scatter(-1, idx, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))
