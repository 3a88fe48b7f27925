"""The notes' loop with seen_ngrams built, per row, writing -inf into the caller's logits.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "ban_repeated_ngrams"


def ban_repeated_ngrams(logits, ids, n):
    if n < 1:
        raise ValueError("n must be >= 1")
    for r in range(ids.shape[0]):
        row = ids[r].tolist()
        if len(row) < n:
            continue
        seen_ngrams = {tuple(row[i:i + n]) for i in range(len(row) - n + 1)}
        prefix = tuple(row[len(row) - n + 1:])
        for token_id in range(logits.shape[-1]):
            if prefix + (token_id,) in seen_ngrams:
                logits[r, token_id] = float("-inf")
    return logits
