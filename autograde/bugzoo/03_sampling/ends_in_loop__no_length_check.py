"""No length check: a too-short tail such as [7, 7] counts as three repeats.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "ends_in_loop"


def ends_in_loop(ids, max_period=20, min_repeats=3):
    ids = list(ids)
    for s in range(1, max_period + 1):
        tail = ids[-s * min_repeats:]
        if tail and all(tail[i] == tail[i - s] for i in range(s, len(tail))):
            return True
    return False
