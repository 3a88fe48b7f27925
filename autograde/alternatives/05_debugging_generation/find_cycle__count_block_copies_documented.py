"""Written by a blind honest student (class 7, h05_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "find_cycle"


def find_cycle(ids, max_period: int = 50, min_repeats: int = 2) -> tuple[int, int]:
    """(period, repeats) of the shortest cycle ending ids with >= min_repeats whole copies, else (0, 0)."""
    seq = ids.tolist() if isinstance(ids, torch.Tensor) else list(ids)
    L = len(seq)
    for s in range(1, max_period + 1):
        if s > L:
            break
        block = seq[L - s:]
        reps = 1
        while (reps + 1) * s <= L and seq[L - (reps + 1) * s: L - reps * s] == block:
            reps += 1
        if reps >= min_repeats:
            return int(s), int(reps)
    return 0, 0
