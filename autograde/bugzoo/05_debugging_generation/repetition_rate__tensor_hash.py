"""Builds n-grams from tensor elements without int(): 0-dim tensors hash by identity, so a tensor input
never repeats.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "repetition_rate"


def repetition_rate(ids, n=4):
    ids = list(ids)
    grams = [tuple(ids[i:i + n]) for i in range(len(ids) - n + 1)]
    return (len(grams) - len(set(grams))) / len(grams) if grams else 0.0
