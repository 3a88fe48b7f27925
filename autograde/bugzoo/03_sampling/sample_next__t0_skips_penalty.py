"""At temperature 0, greedy on the raw logits: the repetition penalty (and every filter) is skipped.

Found by a blind class (session 8); only a penalty that moves the argmax shows it.
Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "sample_next"


def sample_next(logits, generator=None, **settings):
    if settings.get("temperature", 1.0) == 0:
        return greedy(logits)
    z = process_logits(logits, **settings)
    return sample(torch.softmax(z.float(), dim=-1), generator)
