"""At T = 0 samples from the greedy mask: random among tied maxima instead of the lowest id.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "sample_next"


def sample_next(logits, generator=None, **settings):
    return sample(torch.softmax(process_logits(logits, **settings).float(), dim=-1), generator)
