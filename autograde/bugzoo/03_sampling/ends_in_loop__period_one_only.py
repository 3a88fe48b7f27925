"""Only detects one token repeated (period 1).

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "ends_in_loop"


def ends_in_loop(ids, max_period=20, min_repeats=3):
    ids = list(ids)
    return len(ids) >= min_repeats and len(set(ids[-min_repeats:])) == 1
