"""Written by a blind honest student (class 7, h01_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "positions_without_cache"


def positions_without_cache(prompt_len: int, n_new: int) -> int:
    """Token positions processed to generate n_new tokens, rerunning the whole sequence at every step."""
    total = 0
    for j in range(n_new):
        total += prompt_len + j
    return total
