"""Applies softmax to probabilities (confusing probs with logits): flattens the distribution.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "sample"


def sample(probs, generator):
    flat = torch.softmax(probs.reshape(-1, probs.shape[-1]).float(), dim=-1)
    return torch.multinomial(flat, 1, generator=generator).reshape(probs.shape[:-1])
