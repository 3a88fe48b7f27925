"""Always divides: T = 0 gives inf and NaN.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "apply_temperature"


def apply_temperature(logits, T):
    if T < 0:
        raise ValueError("T must be >= 0")
    return logits / T
