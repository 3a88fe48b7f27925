"""Red team 14 (tom05): periods tried only up to 64 whatever max_period says (the default is 50 and no case
asked for more than 51).

Formerly `find_cycle__rt14_max_period_64.py`."""
TARGET = "find_cycle"


def find_cycle(ids, max_period=50, min_repeats=2):
    ids = [int(t) for t in ids]
    for s in range(1, min(max_period, 64) + 1):
        if s * min_repeats > len(ids):
            break
        k = 0
        while k + s < len(ids) and ids[-1 - k] == ids[-1 - k - s]:
            k += 1
        if (k + s) // s >= min_repeats:
            return s, (k + s) // s
    return 0, 0
