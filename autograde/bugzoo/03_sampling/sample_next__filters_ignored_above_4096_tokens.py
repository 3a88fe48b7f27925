"""Red team 14: above 4096 tokens, the settings other than temperature are ignored (every hidden row had at most
~4096 tokens): top-k, top-p, min-p and the penalty never reach a real model's logits.

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `sample_next__rt14_large_vocab_ignores_filters.py`."""
import torch

TARGET = "sample_next"


def sample_next(logits, generator=None, **settings):
    if logits.shape[-1] > 4096:
        settings = {"temperature": settings.get("temperature", 1.0)}
    x = process_logits(logits, **settings)
    if settings.get("temperature", 1.0) == 0:
        return greedy(x)
    return sample(torch.softmax(x.float(), dim=-1), generator)
