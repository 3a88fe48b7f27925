"""Written by a blind honest student (class 7, h05_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "ban_repeated_ngrams"


def ban_repeated_ngrams(logits: torch.Tensor, ids: torch.Tensor, n: int) -> torch.Tensor:
    """-inf for every token that would complete an n-gram already in its row of ids (O(L * n), not O(V))."""
    if n < 1:
        raise ValueError("n must be >= 1")
    out = logits.clone()
    L = ids.shape[1]
    if L < n:
        return out
    grams = ids.unfold(1, n, 1)                       # (B, L - n + 1, n)
    prefix = ids[:, L - n + 1:]                       # (B, n - 1)
    match = (grams[:, :, :n - 1] == prefix[:, None, :]).all(dim=-1)   # (B, L - n + 1)
    for b in range(ids.shape[0]):
        banned = grams[b, match[b], n - 1].to(logits.device)
        out[b, banned] = float("-inf")
    return out
