"""Counts the prompt tokens too (prompt_len ignored).

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "presence_frequency_penalty"


def presence_frequency_penalty(logits, ids, *, presence=0.0, frequency=0.0, prompt_len=0):
    counts = torch.zeros(logits.shape, dtype=torch.float32).scatter_add_(1, ids, torch.ones(ids.shape))
    return (logits.float() - counts * frequency - (counts > 0).float() * presence).to(logits.dtype)
