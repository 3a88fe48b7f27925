"""Right bans, but tries every token of the vocabulary: O(V) Python work where the text asks O(L x n).

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "ban_repeated_ngrams"


def ban_repeated_ngrams(logits, ids, n):
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
