"""Origin: blind author 40 (shown only the student notebooks). No guard for sequences shorter than n: ZeroDivisionError instead of 0.0; exploits '0.0 if ids has no n-grams'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "repetition_rate"

def repetition_rate(ids, n: int = 4) -> float:
    if n < 1:
        raise ValueError("n must be >= 1")
    ids = [int(t) for t in ids]
    grams = [tuple(ids[i:i + n]) for i in range(len(ids) - n + 1)]
    return 1.0 - len(set(grams)) / len(grams)
