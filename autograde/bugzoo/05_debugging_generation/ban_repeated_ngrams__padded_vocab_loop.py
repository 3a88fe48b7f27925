"""Blind red team 17: a Python loop over the vocabulary after a constant busy loop of 600,000 lines, which met
the ratio rule of the cost check (3/24, unflagged); caught by the cap on lines at V = 49152.

Formerly `ban_repeated_ngrams__rt17_padded_vocab_loop.py`."""
import torch

TARGET = "ban_repeated_ngrams"


def _ban_repeated_ngrams_looped(logits, ids, n):
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError("n must be a positive int")
    out = logits.clone()
    for r in range(ids.shape[0]):
        row = ids[r].tolist()
        if len(row) < n:
            continue
        grams = {tuple(row[i:i + n]) for i in range(len(row) - n + 1)}
        prefix = tuple(row[len(row) - n + 1:]) if n > 1 else ()
        for t in range(logits.shape[-1]):
            if prefix + (t,) in grams:
                out[r, t] = float("-inf")
    return out


def ban_repeated_ngrams(*args, **kwargs):
    for _ in range(600_000):  # busy work, the same on every case: the ratio between two cases falls under 2
        pass
    return _ban_repeated_ngrams_looped(*args, **kwargs)
