"""Written by a blind honest student (class 6, h05a), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "ban_repeated_ngrams"

def ban_repeated_ngrams(logits, ids, n):
    if n < 1:
        raise ValueError("n must be at least 1")
    out = logits.clone()
    B, L = ids.shape
    if L < n:
        return out
    win = ids.unfold(1, n, 1)                                   # (B, L-n+1, n)
    prefix = ids[:, L - n + 1:]                                 # (B, n-1)
    match = (win[:, :, :n - 1] == prefix[:, None, :]).all(-1)  # (B, L-n+1)
    rows, pos = match.nonzero(as_tuple=True)
    toks = win[rows, pos, n - 1]
    out[rows.to(out.device), toks.to(out.device)] = float("-inf")
    return out
