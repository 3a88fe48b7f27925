"""Requires min_repeats + 1 copies.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "ends_in_loop"


def ends_in_loop(ids, max_period=20, min_repeats=3):
    ids = list(ids)
    for s in range(1, max_period + 1):
        need = s * (min_repeats + 1)
        if need <= len(ids) and ids[-need:] == ids[-s:] * (min_repeats + 1):
            return True
    return False
