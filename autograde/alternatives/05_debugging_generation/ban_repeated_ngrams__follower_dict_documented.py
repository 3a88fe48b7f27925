"""Written by a blind honest student (class 7, h05_alt2), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "ban_repeated_ngrams"


def ban_repeated_ngrams(logits: torch.Tensor, ids: torch.Tensor, n: int) -> torch.Tensor:
    """-inf for every token that would complete an n-gram already in its row of ids (O(L * n), not O(V))."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    result = logits.clone()
    for b, row in enumerate(ids.tolist()):
        if len(row) < n:
            continue
        followers = {}
        for i in range(len(row) - n + 1):
            followers.setdefault(tuple(row[i:i + n - 1]), set()).add(row[i + n - 1])
        key = tuple(row[len(row) - (n - 1):]) if n > 1 else ()
        for t in followers.get(key, ()):
            result[b, t] = float("-inf")
    return result
