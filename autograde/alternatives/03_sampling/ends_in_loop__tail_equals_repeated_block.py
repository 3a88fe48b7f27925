"""Written by a blind honest student (class 6, h03a), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "ends_in_loop"

def ends_in_loop(ids, max_period=20, min_repeats=3):
    ids = list(ids)
    for s in range(1, max_period + 1):
        need = s * min_repeats
        if need > len(ids) or need == 0:
            continue
        tail = ids[-need:]
        if tail == tail[:s] * min_repeats:
            return True
    return False
