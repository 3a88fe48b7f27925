"""Multiplies by T: T < 1 flattens instead of sharpening.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "apply_temperature"


def apply_temperature(logits, T):
    if T < 0:
        raise ValueError("T must be >= 0")
    if T == 0:
        return logits.masked_fill(logits < logits.amax(dim=-1, keepdim=True), float("-inf"))
    return logits * T
