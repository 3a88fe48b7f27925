"""Written by a blind honest student (class 6, h01b), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "positions_without_cache"

def positions_without_cache(prompt_len: int, n_new: int) -> int:
    if n_new == 0:
        return 0
    first, last = prompt_len, prompt_len + n_new - 1
    return (first + last) * n_new // 2
