"""Blind 38 (issue 38's blind author, who read only the notebook; caught by the hidden check, now by the visible one too): Casts k with int(), so k = 2.5 (a non-integer) is silently accepted as 2 instead of raising; text: "`k` must be a positive `int`: for `k <= 0` (or a non-integer) raise `ValueError`".

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "top_k_filter"


def top_k_filter(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Keep every logit >= the k-th largest of its row (ties kept, as HF does); the rest become -inf."""
    if k <= 0:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    k = min(int(k), logits.shape[-1])
    tau = torch.topk(logits, k, dim=-1).values[..., -1:]
    return torch.where(logits >= tau, logits, torch.full_like(logits, float("-inf")))
