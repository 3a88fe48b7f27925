"""argmax over dim 0: right for one row, wrong for a batch.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "greedy"


def greedy(logits):
    return logits.argmax(dim=0)
