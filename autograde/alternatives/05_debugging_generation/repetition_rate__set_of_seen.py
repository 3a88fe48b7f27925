"""Count n-grams already seen earlier in the sequence with a set of tuples."""

TARGET = "repetition_rate"


def repetition_rate(ids, n=4):
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    ids = [int(t) for t in ids]
    grams = [tuple(ids[i:i + n]) for i in range(len(ids) - n + 1)]
    if not grams:
        return 0.0
    seen, repeats = set(), 0
    for g in grams:
        repeats += g in seen
        seen.add(g)
    return repeats / len(grams)
