"""range(len(seq) - n): the last n-gram of every sequence is skipped.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "distinct_n"


def distinct_n(sequences, n):
    grams = [tuple(seq[i:i + n]) for seq in sequences for i in range(len(seq) - n)]
    return len(set(grams)) / len(grams) if grams else 0.0
