"""Samples from softmax(logits / T), ignoring top-k, top-p, min-p and the penalty.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "sample_next"


def sample_next(logits, generator=None, **settings):
    T = settings.get("temperature", 1.0)
    if T == 0:
        return greedy(logits)
    return sample(torch.softmax(logits.float() / T, dim=-1), generator)
