"""Red team 11: an n-gram counts as a repeat only if it is among the last 3 n-grams before it.

Formerly `repetition_rate__class11_short_lookback.py`."""
TARGET = "repetition_rate"


def repetition_rate(ids, n: int = 4) -> float:
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    ids = [int(t) for t in ids]
    grams = [tuple(ids[i:i + n]) for i in range(len(ids) - n + 1)]
    repeats = sum(g in grams[max(0, i - 3):i] for i, g in enumerate(grams))
    return repeats / len(grams) if grams else 0.0
