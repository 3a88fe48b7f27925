"""Red team 15: `if len(ids) < 2: return False` is wrong for min_repeats=1 on a one-token list ([7] is one block of
one token repeated once: True).

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `ends_in_loop__rt15_short_list_false.py`."""
import torch

TARGET = "ends_in_loop"


def ends_in_loop(ids, max_period=20, min_repeats=3):
    ids = list(ids)
    if len(ids) < 2:
        return False
    for s in range(1, max_period + 1):
        need = s * min_repeats
        if need > len(ids):
            break
        tail = ids[-need:]
        if all(tail[i] == tail[i - s] for i in range(s, need)):
            return True
    return False
