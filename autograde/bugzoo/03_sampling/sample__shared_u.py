"""One uniform number for the whole batch: every row uses the same u, rows are not independent.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "sample"


def sample(probs, generator):
    cdf = probs.double().cumsum(dim=-1)
    u = torch.rand(1, generator=generator, dtype=torch.float64) * cdf[..., -1:]
    return torch.searchsorted(cdf, u.expand(cdf.shape[:-1] + (1,)).contiguous(), right=True).clamp(max=probs.shape[-1] - 1).squeeze(-1)
