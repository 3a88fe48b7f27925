"""Matches a prefix of n tokens (the last n) instead of n - 1: bans what would complete an (n+1)-gram.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "ban_repeated_ngrams"


def ban_repeated_ngrams(logits, ids, n):
    if n < 1:
        raise ValueError("n must be >= 1")
    out = logits.clone()
    for r in range(ids.shape[0]):
        row = ids[r].tolist()
        prefix = row[len(row) - n:] if len(row) >= n else None
        for i in range(len(row) - n):
            if prefix is not None and row[i:i + n] == prefix:
                out[r, row[i + n]] = float("-inf")
    return out
