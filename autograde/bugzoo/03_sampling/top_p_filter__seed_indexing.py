"""The notes' indexing logits[sorted_indices[mask]]: mixes up rows of a batch.

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
    probs = torch.softmax(sorted_x, dim=-1)
    remove = (probs.cumsum(dim=-1) - probs) >= p
    remove[..., :min_tokens_to_keep] = False
    out = logits.clone()
    out[..., order[remove]] = float("-inf")
    return out
