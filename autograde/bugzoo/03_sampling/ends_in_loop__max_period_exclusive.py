"""range(1, max_period): a loop of exactly max_period tokens is missed.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "ends_in_loop"


def ends_in_loop(ids, max_period=20, min_repeats=3):
    ids = list(ids)
    for s in range(1, max_period):
        need = s * min_repeats
        if need <= len(ids) and ids[-need:] == ids[-s:] * min_repeats:
            return True
    return False
