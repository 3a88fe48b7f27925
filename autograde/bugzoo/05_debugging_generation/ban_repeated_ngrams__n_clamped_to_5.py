"""Red team 14 (tom05): n clamped to at most 5 (the cases used n = 1-5): for n = 8 only 5-grams are banned.

Formerly `ban_repeated_ngrams__rt14_n_max5.py`."""
import torch

TARGET = "ban_repeated_ngrams"


def ban_repeated_ngrams(logits, ids, n):
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    n = min(n, 5)
    out = logits.clone()
    for b in range(ids.shape[0]):
        row = ids[b].tolist()
        if len(row) < n:
            continue
        prefix = row[len(row) - n + 1:]
        for i in range(len(row) - n + 1):
            if row[i:i + n - 1] == prefix:
                out[b, row[i + n - 1]] = float("-inf")
    return out
