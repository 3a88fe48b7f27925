"""Uses scatter_ (overwrite) instead of scatter_add_: every count is 0 or 1, so frequency acts once.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "presence_frequency_penalty"


def presence_frequency_penalty(logits, ids, *, presence=0.0, frequency=0.0, prompt_len=0):
    gen = ids[:, prompt_len:]
    counts = torch.zeros(logits.shape, dtype=torch.float32).scatter_(1, gen, 1.0)
    return (logits.float() - counts * frequency - (counts > 0).float() * presence).to(logits.dtype)
