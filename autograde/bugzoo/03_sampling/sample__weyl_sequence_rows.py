"""Red team 14: one real uniform per call; row i uses frac(u0 + i * phi) (a Weyl sequence): every row's marginal
is uniform, but consecutive rows are not independent.

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `sample__rt14_weyl_rows.py`."""
import math
import torch

TARGET = "sample"
PHI = (math.sqrt(5) - 1) / 2


def sample(probs, generator):
    cdf = probs.double().cumsum(dim=-1)
    u0 = torch.rand((), generator=generator, dtype=torch.float64)
    i = torch.arange(math.prod(probs.shape[:-1]), dtype=torch.float64).reshape(probs.shape[:-1] + (1,))
    u = torch.frac(u0 + i * PHI) * cdf[..., -1:]
    return torch.searchsorted(cdf, u, right=True).clamp(max=probs.shape[-1] - 1).squeeze(-1)
