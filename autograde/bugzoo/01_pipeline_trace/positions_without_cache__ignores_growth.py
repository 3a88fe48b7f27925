"""Every pass over the prompt only: ignores the generated tokens.

Runs in the notebook's namespace (its other functions are the reference ones)."""
TARGET = "positions_without_cache"


def positions_without_cache(prompt_len, n_new):
    return n_new * prompt_len
