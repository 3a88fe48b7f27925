"""A plain loop over the new tokens, summing each pass's length."""

TARGET = "positions_without_cache"


def positions_without_cache(prompt_len, n_new):
    total = 0
    for j in range(n_new):
        total += prompt_len + j
    return total
