"""Origin: blind author 40 (shown only the student notebooks). Matches windows of n-1 ids with unfold: for n = 1 the window is empty and nothing is banned; exploits 'n = 1 bans every token the row contains'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "ban_repeated_ngrams"

import torch

def ban_repeated_ngrams(logits, ids, n):
    if n < 1:
        raise ValueError("n must be >= 1")
    out = logits.clone()
    B, L = ids.shape
    for b in range(B):
        row = ids[b]
        if L < n:
            continue
        if n == 1:
            continue
        prefix = row[L - n + 1:]
        windows = row[:L - 1].unfold(0, n - 1, 1)
        hits = (windows == prefix).all(dim=1)
        banned = row[n - 1:][hits]
        out[b, banned.to(out.device)] = float("-inf")
    return out
