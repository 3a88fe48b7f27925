"""Issue 38: zero-probability tokens share a chance of 1e-5 per draw (a floor "so that every token stays possible",
kept small so that it "changes nothing"); the text: "Tokens with probability 0 must never be returned". The
seeded u ~ 1 case catches it (its last token is a zero, at the top of the CDF).

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `sample__i38_leaks_1e-5.py`."""
import torch

TARGET = "sample"


def sample(probs, generator):
    p = probs.double()
    zero = p == 0
    n = zero.sum(dim=-1, keepdim=True).clamp_min(1)
    p = torch.where(zero, 1e-5 / n, p * (1 - 1e-5 * zero.any(dim=-1, keepdim=True)))
    cdf = p.cumsum(dim=-1)
    u = torch.rand(probs.shape[:-1] + (1,), generator=generator, dtype=torch.float64) * cdf[..., -1:]
    return torch.searchsorted(cdf, u, right=True).clamp(max=probs.shape[-1] - 1).squeeze(-1)
