"""Red team 14: only the last 256 ids of a row are scanned for earlier occurrences of the prefix.

Formerly `ban_repeated_ngrams__rt14_last256.py`."""
TARGET = "ban_repeated_ngrams"


def ban_repeated_ngrams(logits, ids, n):
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    out = logits.clone()
    for b in range(ids.shape[0]):
        row = ids[b].tolist()[-256:]
        if len(row) < n:
            continue
        prefix = row[len(row) - n + 1:]
        for i in range(len(row) - n + 1):
            if row[i:i + n - 1] == prefix:
                out[b, row[i + n - 1]] = float("-inf")
    return out
