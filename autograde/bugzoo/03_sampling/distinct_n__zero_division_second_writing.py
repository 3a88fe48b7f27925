"""Origin: blind author 40 (shown only the student notebooks). Divides without guarding the empty case: ZeroDivisionError when no sequence is long enough; exploits '0.0 if there are no n-grams'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "distinct_n"

def distinct_n(sequences: list[list[int]], n: int) -> float:
    if n < 1:
        raise ValueError("n must be >= 1")
    grams = [tuple(s[i:i + n]) for s in sequences for i in range(len(s) - n + 1)]
    return len(set(grams)) / len(grams)
