"""Shortest period first; count whole copies by comparing blocks from the end (no early exit)."""

TARGET = "find_cycle"


def find_cycle(ids, max_period=50, min_repeats=2):
    ids = [int(t) for t in ids]
    n = len(ids)
    for s in range(1, max_period + 1):
        if s > n:
            break
        k = 0                                  # length of the periodic tail, beyond the last block
        while k + s < n and ids[n - 1 - k] == ids[n - 1 - k - s]:
            k += 1
        repeats = (k + s) // s
        if repeats >= min_repeats:
            return (s, repeats)
    return (0, 0)
