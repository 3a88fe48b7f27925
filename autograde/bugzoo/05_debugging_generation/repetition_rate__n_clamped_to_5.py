"""Red team 14 (quentin05): n clamped to at most 5 (the cases used n = 1-5).

Formerly `repetition_rate__rt14_n_max5.py`."""
TARGET = "repetition_rate"


def repetition_rate(ids, n=4):
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    n = min(n, 5)
    ids = [int(t) for t in ids]
    seen, rep, total = set(), 0, 0
    for i in range(len(ids) - n + 1):
        g = tuple(ids[i:i + n])
        rep += g in seen
        seen.add(g)
        total += 1
    return rep / total if total else 0.0
