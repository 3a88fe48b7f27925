"""Checks that the last s * min_repeats ids are periodic and reports min_repeats, never counting further.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "find_cycle"


def find_cycle(ids, max_period=50, min_repeats=2):
    ids = [int(t) for t in ids]
    for s in range(1, max_period + 1):
        if s * min_repeats > len(ids):
            break
        if ids[-s * min_repeats:] == ids[-s:] * min_repeats:
            return s, min_repeats
    return 0, 0
