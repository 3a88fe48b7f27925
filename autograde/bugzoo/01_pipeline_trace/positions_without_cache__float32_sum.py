"""Blind 38 (issue 38's blind author, who read only the notebook; caught only after issue 38's cases): Sums the pass lengths as a float32 tensor, inexact once the total passes 2^24 (e.g. prompt 4096, 4096 new); text: "Return an integer" (the count is exact).

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `positions_without_cache__blind38_float32_sum.py`."""
import torch

TARGET = "positions_without_cache"


def positions_without_cache(prompt_len: int, n_new: int) -> int:
    """Token positions processed to generate n_new tokens, rerunning the whole sequence at every step."""
    lengths = torch.arange(prompt_len, prompt_len + n_new, dtype=torch.float32)   # one pass per new token
    return int(lengths.sum().item())
