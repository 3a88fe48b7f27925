"""Crashes (ZeroDivisionError) when there are no n-grams.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "distinct_n"


def distinct_n(sequences, n):
    grams = [tuple(seq[i:i + n]) for seq in sequences for i in range(len(seq) - n + 1)]
    return len(set(grams)) / len(grams)
