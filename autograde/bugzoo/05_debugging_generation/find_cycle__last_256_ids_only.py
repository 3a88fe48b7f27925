"""Red team 14: only the last 256 ids are looked at (a loop longer than that is counted short).

Formerly `find_cycle__rt14_last256.py`."""
TARGET = "find_cycle"


def find_cycle(ids, max_period=50, min_repeats=2):
    ids = [int(t) for t in ids][-256:]
    for s in range(1, max_period + 1):
        if s * min_repeats > len(ids):
            break
        k = 0
        while k + s < len(ids) and ids[-1 - k] == ids[-1 - k - s]:
            k += 1
        if (k + s) // s >= min_repeats:
            return s, (k + s) // s
    return 0, 0
