"""Returns None instead of (0, 0) when there is no cycle.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "find_cycle"


def find_cycle(ids, max_period=50, min_repeats=2):
    ids = [int(t) for t in ids]
    for s in range(1, max_period + 1):
        if s * min_repeats > len(ids):
            break
        k = 0
        while k + s < len(ids) and ids[-1 - k] == ids[-1 - k - s]:
            k += 1
        if (k + s) // s >= min_repeats:
            return s, (k + s) // s
    return None
