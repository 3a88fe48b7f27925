"""Red team 14 (quentin05): min_repeats clamped to at most 4 (every case asked for 1-4 copies): asked for 6
copies, 4 are enough.

Formerly `find_cycle__rt14_min_repeats_max4.py`."""
TARGET = "find_cycle"


def find_cycle(ids, max_period=50, min_repeats=2):
    ids = [int(t) for t in ids]
    min_repeats = min(min_repeats, 4)
    for s in range(1, max_period + 1):
        if s * min_repeats > len(ids):
            break
        k = 0
        while k + s < len(ids) and ids[-1 - k] == ids[-1 - k - s]:
            k += 1
        if (k + s) // s >= min_repeats:
            return s, (k + s) // s
    return 0, 0
