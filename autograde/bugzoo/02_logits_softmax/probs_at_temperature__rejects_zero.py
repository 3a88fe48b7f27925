"""Treats T = 0 as invalid (T <= 0 raises) instead of returning the greedy distribution.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "probs_at_temperature"


def probs_at_temperature(logits, T):
    if T <= 0:
        raise ValueError("temperature must be > 0")
    return softmax(logits / T)
