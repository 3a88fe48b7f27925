"""Red team 11: only periods 1-4 are tried (the visible cases need no more); max_period is ignored above 4.

Formerly `find_cycle__class11_short_periods.py`."""
TARGET = "find_cycle"


def find_cycle(ids, max_period: int = 50, min_repeats: int = 2):
    ids = [int(t) for t in ids]
    for s in range(1, min(max_period, 4) + 1):
        if s * min_repeats > len(ids):
            break
        k = 0
        while k + s < len(ids) and ids[-1 - k] == ids[-1 - k - s]:
            k += 1
        if (k + s) // s >= min_repeats:
            return s, (k + s) // s
    return 0, 0
