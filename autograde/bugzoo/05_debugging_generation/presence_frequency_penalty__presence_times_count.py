"""Multiplies the presence penalty by the count too (presence behaves like a second frequency penalty).

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "presence_frequency_penalty"


def presence_frequency_penalty(logits, ids, *, presence=0.0, frequency=0.0, prompt_len=0):
    gen = ids[:, prompt_len:]
    counts = torch.zeros(logits.shape, dtype=torch.float32).scatter_add_(1, gen, torch.ones(gen.shape))
    return (logits.float() - counts * (frequency + presence)).to(logits.dtype)
