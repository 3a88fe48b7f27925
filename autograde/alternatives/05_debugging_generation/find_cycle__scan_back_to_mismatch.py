"""Written by a blind honest student (class 7, h05_alt2), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "find_cycle"


def find_cycle(ids, max_period: int = 50, min_repeats: int = 2) -> tuple[int, int]:
    """(period, repeats) of the shortest cycle ending ids with >= min_repeats whole copies, else (0, 0)."""
    x = [int(t) for t in ids]
    L = len(x)
    for s in range(1, min(max_period, L) + 1):
        m = L
        for i in range(L - 1, s - 1, -1):
            if x[i] != x[i - s]:
                m = L - 1 - i + s
                break
        if m // s >= min_repeats:
            return s, m // s
    return 0, 0
