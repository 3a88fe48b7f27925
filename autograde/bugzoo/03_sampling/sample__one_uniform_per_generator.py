"""Red team 14: one uniform drawn per generator, ever; every later row and call continues a Weyl sequence from it
(u_n = frac(u0 + n * phi)): uniform marginals, but no two draws are independent, within a call or across calls.

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `sample__rt14_one_uniform_per_generator.py`."""
import math
import weakref
import torch

TARGET = "sample"
PHI = (math.sqrt(5) - 1) / 2
_STATE = weakref.WeakKeyDictionary()


def sample(probs, generator):
    if generator not in _STATE:
        _STATE[generator] = [float(torch.rand((), generator=generator, dtype=torch.float64)), 0]
    u0, n = _STATE[generator]
    rows = math.prod(probs.shape[:-1])
    _STATE[generator][1] = n + rows
    cdf = probs.double().cumsum(dim=-1)
    i = torch.arange(n, n + rows, dtype=torch.float64).reshape(probs.shape[:-1] + (1,))
    u = torch.frac(u0 + i * PHI) * cdf[..., -1:]
    return torch.searchsorted(cdf, u, right=True).clamp(max=probs.shape[-1] - 1).squeeze(-1)
