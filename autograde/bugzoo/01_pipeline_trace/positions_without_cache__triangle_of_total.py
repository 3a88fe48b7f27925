"""Sums 1..(prompt_len + n_new - 1): as if the prompt were generated one token at a time.

Runs in the notebook's namespace (its other functions are the reference ones)."""
TARGET = "positions_without_cache"


def positions_without_cache(prompt_len, n_new):
    return (prompt_len + n_new - 1) * (prompt_len + n_new) // 2
