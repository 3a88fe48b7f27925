"""Origin: blind author 40 (shown only the student notebooks). Collects banned tokens over all rows and bans them in every row; exploits 'For each row' / per-row histories with rows that differ.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "ban_repeated_ngrams"

import torch

def ban_repeated_ngrams(logits, ids, n):
    if n < 1:
        raise ValueError("n must be >= 1")
    out = logits.clone()
    banned = set()
    for b in range(ids.shape[0]):
        row = ids[b].tolist()
        L = len(row)
        if L < n:
            continue
        pre = row[L - n + 1:] if n > 1 else []
        for i in range(L - n + 1):
            if row[i:i + n - 1] == pre:
                banned.add(row[i + n - 1])
    if banned:
        out[:, sorted(banned)] = float("-inf")
    return out
