"""Origin: blind author 40 (shown only the student notebooks). Does not raise for n < 1 (n = 0 yields len+1 empty n-grams and a rate near 1); exploits 'Raise ValueError if n < 1'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "repetition_rate"

def repetition_rate(ids, n: int = 4) -> float:
    ids = [int(t) for t in ids]
    grams = [tuple(ids[i:i + n]) for i in range(len(ids) - n + 1)]
    if not grams:
        return 0.0
    return 1.0 - len(set(grams)) / len(grams)
