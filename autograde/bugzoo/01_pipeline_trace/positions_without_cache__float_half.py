"""Uses n_new * (n_new + 1) / 2 for the growth: off by one, and a float.

Runs in the notebook's namespace (its other functions are the reference ones)."""
TARGET = "positions_without_cache"


def positions_without_cache(prompt_len, n_new):
    return n_new * prompt_len + n_new * (n_new + 1) / 2
