"""Detects a repeated block anywhere, not only at the end.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "ends_in_loop"


def ends_in_loop(ids, max_period=20, min_repeats=3):
    ids = list(ids)
    for s in range(1, max_period + 1):
        for start in range(0, len(ids) - s * min_repeats + 1):
            block = ids[start:start + s]
            if ids[start:start + s * min_repeats] == block * min_repeats:
                return True
    return False
