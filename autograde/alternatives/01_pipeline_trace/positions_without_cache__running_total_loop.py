"""Written by a blind honest student (class 6, h01a), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "positions_without_cache"

def positions_without_cache(prompt_len: int, n_new: int) -> int:
    total = 0
    for j in range(n_new):
        total += prompt_len + j
    return total
