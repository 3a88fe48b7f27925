"""Divides by the number of tokens instead of the number of n-grams.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "repetition_rate"


def repetition_rate(ids, n=4):
    ids = [int(t) for t in ids]
    seen, rep = set(), 0
    for i in range(len(ids) - n + 1):
        g = tuple(ids[i:i + n])
        rep += g in seen
        seen.add(g)
    return rep / len(ids) if ids else 0.0
