"""Stops at the first earlier occurrence of the prefix (a dict prefix -> next token keeps only one).

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
        nxt = {}
        for i in range(len(row) - n + 1):
            nxt[tuple(row[i:i + n - 1])] = row[i + n - 1]
        key = tuple(row[len(row) - n + 1:])
        if key in nxt:
            out[r, nxt[key]] = float("-inf")
    return out
