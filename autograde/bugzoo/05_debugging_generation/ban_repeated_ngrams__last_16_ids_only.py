"""Red team 11: only the last 16 ids are scanned for earlier occurrences of the prefix.

Formerly `ban_repeated_ngrams__class11_recent_only.py`."""
TARGET = "ban_repeated_ngrams"


def ban_repeated_ngrams(logits, ids, n):
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    out = logits.clone()
    for b in range(ids.shape[0]):
        row = [int(t) for t in ids[b]]
        start = max(0, len(row) - 16)
        prefix = tuple(row[len(row) - n + 1:]) if n > 1 else ()
        if len(row) < n:
            continue
        for i in range(start, len(row) - n + 1):
            if tuple(row[i:i + n - 1]) == prefix:
                out[b, row[i + n - 1]] = float("-inf")
    return out
