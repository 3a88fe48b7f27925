"""Written by a blind honest student (class 7, h03_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "ends_in_loop"


def ends_in_loop(ids: list[int], max_period: int = 20, min_repeats: int = 3) -> bool:
    """True if ids end with one block of 1..max_period tokens repeated at least min_repeats times."""
    L = len(ids)
    for s in range(1, max_period + 1):
        if s * min_repeats > L:
            continue
        block = ids[L - s:]
        if all(ids[L - (r + 1) * s: L - r * s] == block for r in range(min_repeats)):
            return True
    return False
