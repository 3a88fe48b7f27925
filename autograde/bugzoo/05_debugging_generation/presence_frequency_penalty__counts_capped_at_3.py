"""Red team 11: counts capped at 3 (the visible cases never count a token more often).

Formerly `presence_frequency_penalty__class11_capped_counts.py`."""
import torch

TARGET = "presence_frequency_penalty"


def presence_frequency_penalty(logits, ids, *, presence=0.0, frequency=0.0, prompt_len=0):
    generated = ids[:, prompt_len:]
    counts = torch.zeros(logits.shape, dtype=torch.float32)
    counts.scatter_add_(1, generated, torch.ones(generated.shape))
    counts = counts.clamp(max=3)
    return (logits.float() - counts * frequency - (counts > 0).float() * presence).to(logits.dtype)
