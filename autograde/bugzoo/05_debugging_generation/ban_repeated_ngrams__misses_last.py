"""range(L - n): the n-gram ending at the last token is never registered.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "ban_repeated_ngrams"


def ban_repeated_ngrams(logits, ids, n):
    if n < 1:
        raise ValueError("n must be >= 1")
    out = logits.clone()
    for r in range(ids.shape[0]):
        row = ids[r].tolist()
        if len(row) < n:
            continue
        prefix = row[len(row) - n + 1:]
        for i in range(len(row) - n):
            if row[i:i + n - 1] == prefix:
                out[r, row[i + n - 1]] = float("-inf")
    return out
