"""Blind 38 (issue 38's blind author, who read only the notebook; caught by the hidden check, now by the visible one too): Only rejects negative n, so n = 0 returns a number (every 0-gram is the empty tuple) instead of raising; text: "`ValueError` for `n < 1`".

Runs in the notebook's namespace (its other functions are the reference ones)."""
TARGET = "distinct_n"


def distinct_n(sequences: list[list[int]], n: int) -> float:
    """Distinct n-grams / all n-grams, pooled over sequences (n-grams never cross sequences)."""
    if n < 0:
        raise ValueError(f"n must be a non-negative n-gram size, got {n}")
    grams = [tuple(s[i:i + n]) for s in sequences for i in range(len(s) - n + 1)]
    return len(set(grams)) / len(grams) if grams else 0.0
