"""Origin: blind author 40 (shown only the student notebooks). Compares whole blocks with == on slices: fine for lists, but for a 1-D LongTensor == is elementwise and the while test raises for s >= 2; exploits 'ids is a list of ints or a 1-D LongTensor'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "find_cycle"

def find_cycle(ids, max_period: int = 50, min_repeats: int = 2) -> tuple[int, int]:
    L = len(ids)
    for s in range(1, max_period + 1):
        if s > L:
            break
        reps = 1
        while (reps + 1) * s <= L and ids[L - (reps + 1) * s:L - reps * s] == ids[L - s:]:
            reps += 1
        m = reps * s
        while m < L and ids[L - 1 - m] == ids[L - 1 - m + s]:
            m += 1
        if m // s >= min_repeats:
            return int(s), int(m // s)
    return 0, 0
