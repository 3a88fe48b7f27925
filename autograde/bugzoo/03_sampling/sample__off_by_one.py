"""Returns the token before the one whose segment holds u (searchsorted index - 1).

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "sample"


def sample(probs, generator):
    cdf = probs.double().cumsum(dim=-1)
    u = torch.rand(probs.shape[:-1] + (1,), generator=generator, dtype=torch.float64) * cdf[..., -1:]
    return (torch.searchsorted(cdf, u, right=True) - 1).clamp(min=0).squeeze(-1)
