"""Blind 38 (issue 38's blind author, who read only the notebook; caught after the cases of its last round): Keeps p_i > min_p * p_max (strict), removing tokens exactly at the threshold; text: "with equal to the threshold kept (as in HF's `MinPLogitsWarper`)".

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "min_p_filter"


def min_p_filter(logits: torch.Tensor, min_p: float, min_tokens_to_keep: int = 1) -> torch.Tensor:
    """Keep tokens whose probability is >= min_p times the row's top probability."""
    if not 0 <= min_p <= 1:
        raise ValueError(f"min_p must be in [0, 1], got {min_p}")
    if isinstance(min_tokens_to_keep, bool) or not isinstance(min_tokens_to_keep, int) or min_tokens_to_keep < 1:
        raise ValueError("min_tokens_to_keep must be a positive integer")
    if min_p == 0:
        return logits.clone()
    probs = torch.softmax(logits.float(), dim=-1)
    p_max = probs.max(dim=-1, keepdim=True).values
    keep = probs > min_p * p_max
    keep |= probs == p_max                                   # the top token(s) always survive
    order = torch.sort(probs, dim=-1, descending=True).indices
    keep |= torch.zeros_like(keep).scatter(-1, order[..., :min_tokens_to_keep], True)
    return logits.masked_fill(~keep, float("-inf"))
