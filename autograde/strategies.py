"""Hypothesis strategies for the inputs each exercise's text allows (used by ``autograde.generated``
at release).

Each ``*_call`` strategy draws one call ``(args, kwargs)``. They stay inside what the texts promise:
every row of logits keeps a finite entry (no text defines a row of -inf only), half precision only
where a text allows it, and values a dtype cannot hold are not drawn. Hypothesis is needed only when
a release draws new cases.

A hidden module's ``GENERATED`` names its strategies by string (grading imports no Hypothesis);
``STRATEGIES`` is where each name resolves, filled by ``@registered``
(autograde/tests/test_registries.py: every name a hidden module uses resolves, and every registered
strategy is used).
"""

from __future__ import annotations

import math
from typing import Callable

import torch
from hypothesis import strategies as st

F16, BF16, F32, F64 = torch.float16, torch.bfloat16, torch.float32, torch.float64
# values where stability, overflow (exp(89) is inf in float32) and ties show
SPECIAL = (0.0, 1.0, -1.0, 0.5, 2.0, 88.0, 89.0, -88.0, -104.0, 1000.0, -1000.0, 1e4, -1e4)
# the registry: name -> factory of one call's strategy
STRATEGIES: dict[str, Callable[[], st.SearchStrategy]] = {}


def registered(factory: Callable[[], st.SearchStrategy]) -> Callable[[], st.SearchStrategy]:
    """Register a ``*_call`` factory under its own name, the name a hidden module's ``GENERATED``
    gives."""
    STRATEGIES[factory.__name__] = factory
    return factory


@st.composite
def logits(
    draw,
    dtypes=(F32, F64),
    max_dims: int = 3,
    max_side: int = 6,
    neg_inf: bool = True,
    max_abs: float = 1e4,
) -> torch.Tensor:
    """A logits tensor [..., V]: special values, any float in range, -inf entries; a finite entry in
    every row."""
    shape = draw(st.lists(st.integers(1, max_side), min_size=1, max_size=max_dims))
    dtype = draw(st.sampled_from(dtypes))
    special = [v for v in SPECIAL if abs(v) <= max_abs]
    finite = st.one_of(
        st.sampled_from(special), st.floats(-max_abs, max_abs, allow_nan=False, width=32)
    )
    elem = st.one_of(finite, st.just(-math.inf)) if neg_inf else finite
    n = math.prod(shape)
    x = torch.tensor(draw(st.lists(elem, min_size=n, max_size=n)), dtype=F64).reshape(-1, shape[-1])
    x[~torch.isfinite(x).any(-1), 0] = 0.0
    return x.reshape(shape).to(dtype)


@registered
def softmax_call():
    return logits().map(lambda x: ((x,), {}))


@registered
def temperature_call():
    temperature = st.one_of(
        st.sampled_from([0, 0.0, 1, 1e-3, 0.5, 2.0, 100.0]), st.floats(1e-3, 100.0)
    )
    return st.tuples(logits(), temperature).map(lambda a: (a, {}))


@registered
def entropy_call():
    def probs(x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x.double(), dim=-1).to(x.dtype)

    return logits(max_abs=50.0).map(lambda x: ((probs(x),), {}))


@registered
def greedy_call():
    return logits(dtypes=(F16, BF16, F32, F64), max_abs=1000.0).map(lambda x: ((x,), {}))


@registered
def top_k_call():
    @st.composite
    def call(draw):
        x = draw(logits(dtypes=(F16, BF16, F32, F64), max_abs=1000.0))
        return (x, draw(st.integers(1, x.shape[-1] + 2))), {}

    return call()


@registered
def apply_temperature_call():
    return st.tuples(logits(), st.sampled_from([0, 0.0, 1e-3, 0.5, 1, 2.0])).map(lambda a: (a, {}))


@registered
def penalize_repeats_call():
    @st.composite
    def call(draw):
        x = draw(logits(max_dims=2))
        L = draw(st.integers(0, 6))
        ids = draw(
            st.lists(
                st.integers(0, x.shape[-1] - 1),
                min_size=L * math.prod(x.shape[:-1]),
                max_size=L * math.prod(x.shape[:-1]),
            )
        )
        ids = torch.tensor(ids, dtype=torch.long).reshape(x.shape[:-1] + (L,))
        penalty = draw(st.one_of(st.sampled_from([0.5, 0.8, 1.0, 1.3, 2.0]), st.floats(0.1, 5.0)))
        return (x, ids, penalty), {}

    return call()


_IDS = st.integers(0, 3)  # a small alphabet: repeats, cycles and shared n-grams are common


@registered
def distinct_n_call():
    seqs = st.lists(st.lists(_IDS, max_size=8), max_size=4)
    return st.tuples(seqs, st.integers(1, 4)).map(lambda a: (a, {}))


@registered
def ends_in_loop_call():
    return st.tuples(st.lists(_IDS, max_size=20), st.integers(1, 6), st.integers(2, 4)).map(
        lambda a: ((a[0],), {"max_period": a[1], "min_repeats": a[2]})
    )


@registered
def find_cycle_call():
    ids = st.one_of(
        st.lists(_IDS, max_size=20),
        st.lists(_IDS, max_size=20).map(lambda v: torch.tensor(v, dtype=torch.long)),
    )
    return st.tuples(ids, st.integers(1, 8), st.integers(2, 4)).map(
        lambda a: ((a[0],), {"max_period": a[1], "min_repeats": a[2]})
    )


@registered
def repetition_rate_call():
    ids = st.one_of(
        st.lists(_IDS, max_size=16),
        st.lists(_IDS, max_size=16).map(lambda v: torch.tensor(v, dtype=torch.long)),
    )
    return st.tuples(ids, st.integers(1, 5)).map(lambda a: ((a[0],), {"n": a[1]}))


@registered
def ban_repeated_ngrams_call():
    @st.composite
    def call(draw):
        B, V, L = draw(st.integers(1, 3)), draw(st.integers(1, 6)), draw(st.integers(0, 10))
        x = torch.tensor(
            draw(st.lists(st.floats(-5, 5, width=32), min_size=B * V, max_size=B * V))
        ).reshape(B, V)
        ids = torch.tensor(
            draw(st.lists(st.integers(0, V - 1), min_size=B * L, max_size=B * L)), dtype=torch.long
        ).reshape(B, L)
        return (x, ids, draw(st.integers(1, 4))), {}

    return call()
