"""Origin: blind author 40 (shown only the student notebooks). Tries s in range(1, max_period), never s = max_period; exploits 'for some s in 1..max_period'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "ends_in_loop"

def ends_in_loop(ids: list[int], max_period: int = 20, min_repeats: int = 3) -> bool:
    for s in range(1, max_period):
        L = s * min_repeats
        if L > len(ids):
            break
        tail = list(ids[-L:])
        if all(tail[i] == tail[i % s] for i in range(L)):
            return True
    return False
