"""N-grams keyed by their ids' digits glued into a string: (1, 23) and (12, 3) collide (the text: an n-gram is a tuple of ids). (blind class 10)

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `distinct_n__class10_glued_digits.py`."""
import torch

TARGET = "distinct_n"


def distinct_n(sequences: list[list[int]], n: int) -> float:
    """Distinct n-grams / all n-grams, pooled over sequences (n-grams never cross sequences)."""
    if n < 1:
        raise ValueError("n must be >= 1")
    grams = []
    for seq in sequences:
        seq = list(seq)
        grams.extend("".join(str(t) for t in seq[i:i + n]) for i in range(len(seq) - n + 1))
    if not grams:
        return 0.0
    return len(set(grams)) / len(grams)
