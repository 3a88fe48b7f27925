"""Origin: blind author 40 (shown only the student notebooks). Tries periods from max_period down to 1 and returns the first hit: a period-2 loop long enough is reported as period 4 (or larger); exploits 'we want the shortest period that has enough copies'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "find_cycle"

def find_cycle(ids, max_period: int = 50, min_repeats: int = 2) -> tuple[int, int]:
    ids = [int(t) for t in ids]
    L = len(ids)
    for s in range(min(max_period, len(ids)), 0, -1):
        m = s
        while m < L and ids[L - 1 - m] == ids[L - 1 - m + s]:
            m += 1
        if m // s >= min_repeats:
            return s, m // s
    return 0, 0
