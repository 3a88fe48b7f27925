"""Concatenates the sequences: n-grams span the boundary between two generations.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "distinct_n"


def distinct_n(sequences, n):
    flat = [t for seq in sequences for t in seq]
    grams = [tuple(flat[i:i + n]) for i in range(len(flat) - n + 1)]
    return len(set(grams)) / len(grams) if grams else 0.0
