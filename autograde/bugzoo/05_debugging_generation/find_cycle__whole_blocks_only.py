"""Counts repeats as len(ids) // period, as if the whole sequence were periodic, not only its tail."""
import torch

TARGET = "find_cycle"


def find_cycle(ids, max_period=50, min_repeats=2):
    ids = [int(t) for t in ids]
    for s in range(1, max_period + 1):
        if s * min_repeats > len(ids):
            break
        block = ids[-s:]
        if ids[-s * min_repeats:] == block * min_repeats:
            return s, len(ids) // s
    return 0, 0
