"""Divides the probabilities by T and renormalises: temperature has no effect.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "sample_next"


def sample_next(logits, generator=None, **settings):
    T = settings.pop("temperature", 1.0)
    x = process_logits(logits, **settings)
    if T == 0:
        return greedy(x)
    probs = torch.softmax(x.float(), dim=-1) / T
    return sample(probs / probs.sum(dim=-1, keepdim=True), generator)
