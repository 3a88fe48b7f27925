"""Treats the probabilities as logits and applies softmax first.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "entropy"


def entropy(probs):
    p = softmax(probs)
    return -(p * log_softmax(probs)).sum(dim=-1)
