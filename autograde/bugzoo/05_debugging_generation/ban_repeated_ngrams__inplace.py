"""Origin: blind author 40 (shown only the student notebooks). Writes -inf into the caller's logits and returns them; exploits 'Return a new tensor (input dtype); never modify logits'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "ban_repeated_ngrams"

import torch

def ban_repeated_ngrams(logits, ids, n):
    if n < 1:
        raise ValueError("n must be >= 1")
    for b in range(ids.shape[0]):
        row = ids[b].tolist()
        L = len(row)
        if L < n:
            continue
        pre = row[L - n + 1:] if n > 1 else []
        for i in range(L - n + 1):
            if row[i:i + n - 1] == pre:
                logits[b, row[i + n - 1]] = float("-inf")
    return logits
