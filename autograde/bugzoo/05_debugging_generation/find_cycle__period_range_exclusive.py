"""Origin: blind author 40 (shown only the student notebooks). Tries s in range(1, max_period): a cycle of period exactly max_period is never found; exploits 'the smallest s in 1..max_period (inclusive)'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "find_cycle"

def find_cycle(ids, max_period: int = 50, min_repeats: int = 2) -> tuple[int, int]:
    ids = [int(t) for t in ids]
    L = len(ids)
    for s in range(1, max_period):
        if s > L:
            break
        m = s
        while m < L and ids[L - 1 - m] == ids[L - 1 - m + s]:
            m += 1
        if m // s >= min_repeats:
            return s, m // s
    return 0, 0
