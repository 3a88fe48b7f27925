"""Counts every n-gram that occurs more than once, including its first occurrence.

Runs in the notebook's namespace (its other functions are the reference ones)."""
from collections import Counter

import torch

TARGET = "repetition_rate"


def repetition_rate(ids, n=4):
    ids = [int(t) for t in ids]
    grams = [tuple(ids[i:i + n]) for i in range(len(ids) - n + 1)]
    c = Counter(grams)
    return sum(1 for g in grams if c[g] > 1) / len(grams) if grams else 0.0
