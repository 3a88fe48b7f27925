"""Softmax and cumulative sum in the input dtype: a bfloat16 cut moves (the text: compute the probabilities in float32). (blind class 10)

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `top_p_filter__class10_bf16_sums.py`."""
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
    probs = torch.softmax(logits, dim=-1)
    sp, idx = torch.sort(probs, dim=-1, descending=True)
    cum = torch.cumsum(sp, dim=-1)
    before = torch.cat([torch.zeros_like(cum[..., :1]), cum[..., :-1]], dim=-1)
    keep_sorted = before < p
    keep_sorted[..., :min_tokens_to_keep] = True
    keep = torch.zeros_like(keep_sorted).scatter(-1, idx, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))
