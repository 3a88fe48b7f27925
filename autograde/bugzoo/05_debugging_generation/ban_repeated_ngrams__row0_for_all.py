"""Computes the bans from row 0's history and applies them to every row.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "ban_repeated_ngrams"


def ban_repeated_ngrams(logits, ids, n):
    if n < 1:
        raise ValueError("n must be >= 1")
    out = logits.clone()
    row = ids[0].tolist()
    if len(row) < n:
        return out
    prefix = row[len(row) - n + 1:]
    for i in range(len(row) - n + 1):
        if row[i:i + n - 1] == prefix:
            out[:, row[i + n - 1]] = float("-inf")
    return out
