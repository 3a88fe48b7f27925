"""A "float safety" 1e-6 keeps tokens just below min_p * p_max (the text: keep p_i >= min_p * p_max; only equal is kept). (blind class 10)

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `min_p_filter__class10_epsilon.py`."""
import torch

TARGET = "min_p_filter"


def min_p_filter(logits: torch.Tensor, min_p: float, min_tokens_to_keep: int = 1) -> torch.Tensor:
    """Keep tokens whose probability is >= min_p times the row's top probability."""
    if not (0 <= min_p <= 1):
        raise ValueError("min_p must be in [0, 1]")
    if isinstance(min_tokens_to_keep, bool) or not isinstance(min_tokens_to_keep, int) or min_tokens_to_keep < 1:
        raise ValueError("min_tokens_to_keep must be a positive integer")
    probs = torch.softmax(logits.float(), dim=-1)
    pmax = probs.max(dim=-1, keepdim=True).values
    keep = probs >= min_p * pmax - 1e-6
    m = min(min_tokens_to_keep, logits.shape[-1])
    top = torch.topk(probs, m, dim=-1).indices
    keep = keep.scatter(-1, top, True)
    return logits.masked_fill(~keep, float("-inf"))
