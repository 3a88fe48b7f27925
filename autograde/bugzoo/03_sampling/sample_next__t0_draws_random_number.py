"""Red team 14: at temperature 0 a random number is still drawn from the caller's generator (and thrown away):
the text says "with no random number drawn"; the caller's stream moves on although the step is greedy.

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `sample_next__rt14_t0_draws.py`."""
import torch

TARGET = "sample_next"


def sample_next(logits, generator=None, **settings):
    x = process_logits(logits, **settings)
    ids = sample(torch.softmax(x.float(), dim=-1), generator)
    if settings.get("temperature", 1.0) == 0:
        return greedy(x)
    return ids
