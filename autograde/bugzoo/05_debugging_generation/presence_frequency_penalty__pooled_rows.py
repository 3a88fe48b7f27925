"""Counts with one bincount over the whole batch: every row is penalised for every row's tokens.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "presence_frequency_penalty"


def presence_frequency_penalty(logits, ids, *, presence=0.0, frequency=0.0, prompt_len=0):
    gen = ids[:, prompt_len:]
    counts = torch.bincount(gen.reshape(-1), minlength=logits.shape[-1]).float()       # (V,)
    return (logits.float() - counts * frequency - (counts > 0).float() * presence).to(logits.dtype)
