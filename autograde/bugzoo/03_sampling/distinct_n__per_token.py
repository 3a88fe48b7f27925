"""Divides by the number of tokens instead of the number of n-grams.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "distinct_n"


def distinct_n(sequences, n):
    grams = [tuple(seq[i:i + n]) for seq in sequences for i in range(len(seq) - n + 1)]
    total = sum(len(seq) for seq in sequences)
    return len(set(grams)) / total if total else 0.0
