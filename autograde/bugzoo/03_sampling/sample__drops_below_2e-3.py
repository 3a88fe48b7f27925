"""Red team 14: tokens with probability below 2e-3 are dropped before drawing (on a real model 26-29 % of the
mass sits below 2e-3, spread over tens of thousands of tokens; 1e-2 was caught, 2e-3 was not).

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `sample__rt14_drops_below_2e-3.py`."""
import torch

TARGET = "sample"


def sample(probs, generator):
    p = probs.double()
    p = torch.where(p < 2e-3, torch.zeros_like(p), p)
    cdf = p.cumsum(dim=-1)
    u = torch.rand(probs.shape[:-1] + (1,), generator=generator, dtype=torch.float64) * cdf[..., -1:]
    return torch.searchsorted(cdf, u, right=True).clamp(max=probs.shape[-1] - 1).squeeze(-1)
