"""No guard for sequences without n-grams: ZeroDivisionError.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "repetition_rate"


def repetition_rate(ids, n=4):
    ids = [int(t) for t in ids]
    grams = [tuple(ids[i:i + n]) for i in range(len(ids) - n + 1)]
    return (len(grams) - len(set(grams))) / len(grams)
