"""Sums j = 1..n_new instead of 0..n_new-1 (counts the last token's pass too).

Runs in the notebook's namespace (its other functions are the reference ones)."""
TARGET = "positions_without_cache"


def positions_without_cache(prompt_len, n_new):
    return sum(prompt_len + j for j in range(1, n_new + 1))
