"""03's hidden `sample` cases at the edges of the inverse CDF (autograde/hidden/sampling.py,
`_sample_cases`).

Guarantee: the text's "first c_i > u" and "scale u by the actual total" are graded, though a
frequency test cannot see them (each mistake changes one draw in ~10^7). Each edge case's generator
seed puts the one uniform that exposes a mistake into its stream of 4000; this test holds the seeds
to their values (a torch release that changes its generator fails here, not silently in grading),
and shows that three wrong samplers a blind class wrote lose the check while three honest ones keep
it.
"""

from __future__ import annotations

import torch

from autograde.hidden import HIDDEN
from course_lib.checks.engine import evaluate

EDGES = {2918: ("float32", 3237), 286: ("float64", 1678), 2313: ("float32", 3997)}


def test_each_seed_holds_its_edge_value():
    for seed, (dtype, row) in EDGES.items():
        u = torch.rand(
            4000, generator=torch.Generator().manual_seed(seed), dtype=getattr(torch, dtype)
        )
        if seed == 2918:
            assert u[row].item() == 1 - 2**-24  # the largest float32 below 1
        elif seed == 286:
            assert u[row].item() > 1 - 2**-23  # above the rows' total
        else:
            assert u[row].item() == 0.0


def _inverse_cdf(cdf_dtype, u_dtype, scale: bool, right: bool, clamp: bool):
    def sample(probs, generator):
        cdf = torch.cumsum(probs.to(cdf_dtype), dim=-1)
        u = torch.rand(probs.shape[:-1] + (1,), generator=generator, dtype=u_dtype).to(cdf_dtype)
        if scale:
            u = u * cdf[..., -1:]
        idx = torch.searchsorted(cdf.contiguous(), u, right=right).squeeze(-1)
        return idx.clamp(max=probs.shape[-1] - 1) if clamp else idx

    return sample


def test_wrong_samplers_lose_the_check_and_honest_ones_keep_it():
    chk = HIDDEN.get("sample_hidden")
    expected = HIDDEN.expected_values("sample_hidden")
    honest = {
        "float64 cdf, scaled, right=True": _inverse_cdf(
            torch.float64, torch.float32, True, True, False
        ),
        "float64 cdf, float64 u, scaled, right=True": _inverse_cdf(
            torch.float64, torch.float64, True, True, False
        ),
        "torch.multinomial": lambda p, g: torch.multinomial(
            p.reshape(-1, p.shape[-1]), 1, generator=g
        ).reshape(p.shape[:-1]),
    }
    wrong = {
        "blind class 7: float32, unscaled, right=False, clamped": _inverse_cdf(
            torch.float32, torch.float32, False, False, True
        ),
        "float64 u, not scaled": _inverse_cdf(torch.float64, torch.float64, False, True, True),
        "right=False only": _inverse_cdf(torch.float64, torch.float32, True, False, False),
    }
    for name, fn in honest.items():
        assert evaluate(chk, fn, expected, raise_on_fail=False, quiet=True).passed, name
    for name, fn in wrong.items():
        assert not evaluate(chk, fn, expected, raise_on_fail=False, quiet=True).passed, name
