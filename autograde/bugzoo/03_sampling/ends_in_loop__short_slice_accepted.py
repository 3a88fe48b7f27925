"""Origin: blind author 40 (shown only the student notebooks). Only checks that two copies fit (2*s <= len) before slicing: ids[-s*min_repeats:] silently returns a too-short tail, so [7, 7] counts as a loop with min_repeats=3; exploits 'else False (also for sequences too short to contain any such tail)'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "ends_in_loop"

def ends_in_loop(ids: list[int], max_period: int = 20, min_repeats: int = 3) -> bool:
    ids = list(ids)
    for s in range(1, max_period + 1):
        if 2 * s > len(ids):
            break
        tail = ids[-s * min_repeats:]
        if all(tail[i] == tail[i % s] for i in range(len(tail))):
            return True
    return False
