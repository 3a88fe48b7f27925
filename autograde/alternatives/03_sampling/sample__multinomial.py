"""torch.multinomial with the caller's generator (allowed by the text), reshaped to the batch shape."""
import torch

TARGET = "sample"


def sample(probs, generator):
    V = probs.shape[-1]
    ids = torch.multinomial(probs.reshape(-1, V).double(), 1, generator=generator)
    return ids.reshape(probs.shape[:-1])
