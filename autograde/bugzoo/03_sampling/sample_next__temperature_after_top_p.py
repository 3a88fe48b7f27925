"""Filters at T = 1 and divides by T afterwards (llama.cpp's order), not the pipeline's.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "sample_next"


def sample_next(logits, generator=None, **settings):
    T = settings.pop("temperature", 1.0)
    x = process_logits(logits, **settings)
    if T == 0:
        return greedy(x)
    return sample(torch.softmax(x.float() / T, dim=-1), generator)
