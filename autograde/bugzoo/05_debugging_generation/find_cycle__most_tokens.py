"""Issue 35 (no visible case had periods that compete): of the periods with enough copies, picks the one whose periodic tail covers the most ids instead of the shortest.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "find_cycle"


def find_cycle(ids, max_period: int = 50, min_repeats: int = 2) -> tuple[int, int]:
    ids = [int(i) for i in ids]
    best = (0, 0, 0)                                  # (period, copies, ids covered)
    for s in range(1, max_period + 1):
        m = 0
        while len(ids) - 1 - m - s >= 0 and ids[len(ids) - 1 - m] == ids[len(ids) - 1 - m - s]:
            m += 1
        copies = (m + s) // s
        if copies >= min_repeats and copies * s > best[2]:
            best = (s, copies, copies * s)
    return best[0], best[1]
