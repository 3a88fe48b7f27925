"""torch.multinomial(probs, 1) returns shape [B, 1]; the [B] squeeze is missing.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "sample"


def sample(probs, generator):
    flat = probs.reshape(-1, probs.shape[-1])
    return torch.multinomial(flat.float(), 1, generator=generator).reshape(probs.shape[:-1] + (1,))
