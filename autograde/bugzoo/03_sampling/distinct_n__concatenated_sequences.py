"""Origin: blind author 40 (shown only the student notebooks). Concatenates all sequences before taking n-grams, so n-grams span two sequences; exploits '(n-grams never span two sequences)'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "distinct_n"

def distinct_n(sequences: list[list[int]], n: int) -> float:
    if n < 1:
        raise ValueError("n must be >= 1")
    flat = [t for s in sequences for t in s]
    grams = [tuple(flat[i:i + n]) for i in range(len(flat) - n + 1)]
    return len(set(grams)) / len(grams) if grams else 0.0
