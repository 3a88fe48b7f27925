"""Red team 14: only the last 256 ids are looked at.

Formerly `repetition_rate__rt14_last256.py`."""
TARGET = "repetition_rate"


def repetition_rate(ids, n=4):
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    ids = [int(t) for t in ids][-256:]
    seen, rep, total = set(), 0, 0
    for i in range(len(ids) - n + 1):
        g = tuple(ids[i:i + n])
        rep += g in seen
        seen.add(g)
        total += 1
    return rep / total if total else 0.0
