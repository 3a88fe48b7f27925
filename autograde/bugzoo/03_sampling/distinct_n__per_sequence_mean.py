"""Averages each sequence's ratio instead of pooling all n-grams.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "distinct_n"


def distinct_n(sequences, n):
    ratios = []
    for seq in sequences:
        grams = [tuple(seq[i:i + n]) for i in range(len(seq) - n + 1)]
        if grams:
            ratios.append(len(set(grams)) / len(grams))
    return sum(ratios) / len(ratios) if ratios else 0.0
