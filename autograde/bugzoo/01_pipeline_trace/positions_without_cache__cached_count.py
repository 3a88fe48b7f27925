"""The KV-cache count (prompt once, then one position per token).

Runs in the notebook's namespace (its other functions are the reference ones)."""
TARGET = "positions_without_cache"


def positions_without_cache(prompt_len, n_new):
    return prompt_len + n_new - 1 if n_new else 0
