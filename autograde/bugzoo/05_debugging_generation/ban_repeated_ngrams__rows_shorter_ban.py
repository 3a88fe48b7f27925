"""Origin: blind author 40 (shown only the student notebooks). When a row is shorter than n it matches a shorter prefix (k = min(n-1, L-1)) instead of skipping the row, so short rows still ban tokens; exploits 'Rows shorter than n ban nothing'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "ban_repeated_ngrams"

import torch

def ban_repeated_ngrams(logits, ids, n):
    if n < 1:
        raise ValueError("n must be >= 1")
    out = logits.clone()
    for b in range(ids.shape[0]):
        row = ids[b].tolist()
        L = len(row)
        k = min(n - 1, L - 1)
        prefix = row[L - k:] if k > 0 else []
        for i in range(L - k):
            if row[i:i + k] == prefix:
                out[b, row[i + k]] = float("-inf")
    return out
