"""Returns the largest logit, not its index.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "greedy"


def greedy(logits):
    return logits.max(dim=-1).values
