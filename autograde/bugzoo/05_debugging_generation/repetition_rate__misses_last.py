"""range(len(ids) - n): the last n-gram is never looked at.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "repetition_rate"


def repetition_rate(ids, n=4):
    ids = [int(t) for t in ids]
    seen, rep, total = set(), 0, 0
    for i in range(len(ids) - n):
        g = tuple(ids[i:i + n])
        rep += g in seen
        seen.add(g)
        total += 1
    return rep / total if total else 0.0
