"""Returns distinct-n (new n-grams / all) instead of the repeated share.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "repetition_rate"


def repetition_rate(ids, n=4):
    ids = [int(t) for t in ids]
    grams = [tuple(ids[i:i + n]) for i in range(len(ids) - n + 1)]
    return len(set(grams)) / len(grams) if grams else 0.0
