"""The notes' rule: keeps a token while the mass before it is <= p (one too many when a prefix sums to p).

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "top_p_filter"


def top_p_filter(logits, p, min_tokens_to_keep=1):
    if not 0.0 <= p <= 1.0:
        raise ValueError("p must be in [0, 1]")
    if p == 1.0:
        return logits.clone()
    x = logits.float() if logits.dtype != torch.float64 else logits

    sorted_x, order = torch.sort(x, dim=-1, descending=True)
    cum = torch.softmax(sorted_x, dim=-1).cumsum(dim=-1)
    remove = cum > p
    remove[..., 1:] = remove[..., :-1].clone()
    remove[..., :min_tokens_to_keep] = False
    remove = remove.scatter(-1, order, remove)
    return logits.masked_fill(remove, float("-inf"))
