"""Counts distinct tokens whatever n is.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "distinct_n"


def distinct_n(sequences, n):
    tokens = [t for seq in sequences for t in seq]
    return len(set(tokens)) / len(tokens) if tokens else 0.0
