"""Notebook 03 at real sizes, and its samplers' independence.

A blind red team kept full points on 03 with answers right only where the hidden cases looked (V <=
~4096, k <= 64, short histories: argmax over the first 8192 ids, k capped at 64, top-p over the 4096
largest logits, min-p keeping at most 256 tokens, temperature skipped above 4096 tokens, a penalty
over the last 64 ids, filters skipped above 4096 tokens), with samplers whose draws were not
independent (a Weyl sequence from one uniform per call, or one per generator ever), and with a
sampler that drops tokens below 2e-3 or 1e-4. Each is a bug-zoo entry ``*__rt14_*``. Here,
in-process and without running a notebook:

- every such entry fails its hidden check, and passes it with the new cases taken out (it lived
before);
- the honest alternative answers pass the new cases;
- the expected values the new cases build themselves (nothing stored) agree with second
implementations
  (numpy, float64, pure Python), and the new comparator's two tests each catch what they are for
  while a correct sampler passes.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from autograde.course import Course
from autograde.hidden import sampling as S
from autograde.inside.codec import encode_cases
from autograde.selfcheck import _target
from course_lib.checks.engine import MISSING, Case, Generator, evaluate
from course_lib.checks.sampling import sampler_fit, sampler_strict

ROOT = Path(__file__).resolve().parents[1]
ZOO, ALT = ROOT / "bugzoo" / "03_sampling", ROOT / "alternatives" / "03_sampling"

# exercise -> (hidden check, builder of its new cases)
REAL = {
    "greedy": ("greedy_hidden", S._greedy_real_cases),
    "top_k_filter": ("top_k_filter_hidden", S._top_k_real_cases),
    "top_p_filter": ("top_p_filter_hidden", S._top_p_real_cases),
    "min_p_filter": ("min_p_filter_hidden", S._min_p_real_cases),
    "apply_temperature": ("apply_temperature_hidden", S._temperature_real_cases),
    "penalize_repeats": ("penalize_repeats_hidden", S._penalty_real_cases),
    "sample": ("sample_hidden", S._sample_real_cases),
    "sample_next": ("sample_next_hidden", S._sample_next_real_cases),
}
# cases added after the real-size ones, absent "before" too: the cost cases (white-box red team 25,
# E4: a Python loop over every id)
LATER = {"penalize_repeats_hidden": S._visible._penalty_cost_cases}
ENTRIES = [
    "greedy__first_8192_ids_only",
    "top_k_filter__k_capped_at_64",
    "top_p_filter__top_4096_logits_only",
    "min_p_filter__top_256_prefilter",
    "apply_temperature__unscaled_above_4096_tokens",
    "penalize_repeats__last_64_ids_only",
    "sample__weyl_sequence_rows",
    "sample__one_uniform_per_generator",
    "sample__drops_below_2e-3",
    "sample__drops_below_1e-4",
    "sample_next__filters_ignored_above_4096_tokens",
]


@pytest.fixture(scope="module")
def registry():
    return Course().hidden_registry()


@pytest.fixture(scope="module")
def reference():
    """The notebook's functions (the zoo entries call the reference's other steps, e.g.
    process_logits)."""
    from autograde.references import reference_namespace

    course = Course()
    return reference_namespace(course, course.source_notebooks("03_sampling")[0])


def _load(path: Path, ns: dict):
    env = {**ns, "torch": torch, "math": math, "np": np}
    exec(compile(path.read_text(), str(path), "exec"), env)
    return env[_target(path)]


def _split(registry, check: str, build) -> tuple:
    chk = registry.get(check)
    cases = chk.cases()
    expected = registry.expected_values(check, cases)
    new = {c.label for c in build()} | {c.label for c in LATER.get(check, list)()}
    assert new and new <= {c.label for c in cases}, (
        f"{check}: its new cases are not among its cases"
    )
    by_label = {c.label: e for c, e in zip(cases, expected)}
    written = [c for c in chk.cases.__wrapped_cases__() if c.label not in new]
    # its contract derives the same extra cases
    before = dataclasses.replace(chk, cases=lambda: written)
    return chk, expected, before, [by_label[c.label] for c in before.cases()]


@pytest.mark.parametrize("entry", ENTRIES)
def test_rt14_entry_fails_now_and_lived_before(registry, reference, entry):
    path = ZOO / f"{entry}.py"
    target = _target(path)
    check, build = REAL[target]
    fn = _load(path, reference)
    chk, expected, before, expected_before = _split(registry, check, build)
    assert not evaluate(chk, fn, expected, raise_on_fail=False, quiet=True).passed, (
        f"{entry} passes {check}"
    )
    assert evaluate(before, fn, expected_before, raise_on_fail=False, quiet=True).passed, (
        f"{entry} was caught before"
    )


@pytest.mark.parametrize("exercise", sorted(REAL))
def test_reference_and_honest_alternatives_pass_the_new_cases(registry, reference, exercise):
    check, build = REAL[exercise]
    chk = registry.get(check)
    cases = build()
    # built by construction: nothing stored
    assert all(c.expected is not MISSING for c in cases)
    only_new = dataclasses.replace(
        chk,
        cases=lambda: cases,
        contract=dataclasses.replace(chk.contract, twice=False, float64=False, meta=False),
    )
    expected = [c.expected for c in cases]
    paths = sorted(ALT.glob(f"{exercise}__*.py"))
    assert paths
    r = evaluate(only_new, reference[exercise], expected, raise_on_fail=False, quiet=True)
    assert r.passed, f"reference: {r.message}"
    for path in paths:
        r = evaluate(only_new, _load(path, reference), expected, raise_on_fail=False, quiet=True)
        assert r.passed, f"{path.name}: {r.message}"


def test_new_cases_reach_past_the_old_ranges_and_stay_cheap():
    for _, build in REAL.values():
        for c in build():
            x = c.args[0]
            # SmolLM2's vocabulary
            assert x.shape[-1] == S.V_REAL or c.label.startswith("[4")
    assert max(c.args[1] for c in S._top_k_real_cases()) >= 300
    assert max(c.args[1].shape[-1] for c in S._penalty_real_cases()) >= 600
    payload = sum(len(encode_cases(build())) for _, build in REAL.values())
    # short dyadic logits: ~9 MB of JSON to the sandbox, not ~85
    assert payload < 12e6, payload


# ------------------------------------------------------------------ the constructed expected
# values, checked by hand
def _kept(row: torch.Tensor) -> set[int]:
    return set(np.flatnonzero(np.isfinite(row.double().numpy())).tolist())


def test_greedy_truth_is_the_first_maximum():
    for c in S._greedy_real_cases():
        for row, want in zip(c.args[0].double().tolist(), c.expected.tolist()):
            assert row.index(max(row)) == want and want >= 8192


def test_top_k_truth_is_every_logit_at_least_the_kth_largest():
    for c in S._top_k_real_cases():
        x, k = c.args
        for r in range(x.shape[0]):
            row = x[r].double().numpy()
            kth = np.sort(row)[-k]
            assert _kept(c.expected[r]) == set(np.flatnonzero(row >= kth).tolist())
            assert len(_kept(c.expected[r])) == k + 2 and max(_kept(c.expected[r])) >= 32768


def test_top_p_truth_in_float64_and_its_margin():
    (c,) = S._top_p_real_cases()
    x, p = c.args
    for r in range(2):
        z = x[r].double().numpy()
        q = np.exp(z - z.max())
        q /= q.sum()
        order = np.argsort(-q, kind="stable")
        before = np.cumsum(q[order]) - q[order]
        assert np.abs(before - p).min() >= S.MARGIN
        assert _kept(c.expected[r]) == set(order[before < p].tolist())
    assert len(_kept(c.expected[0])) == 4100 and min(_kept(c.expected[1])) >= 32768


def test_min_p_truth_in_float64():
    for c in S._min_p_real_cases():
        x, mp = c.args
        m = c.kwargs.get("min_tokens_to_keep", 1)
        for r in range(x.shape[0]):
            z = x[r].double().numpy()
            ratio = np.exp(z - z.max())
            keep = set(np.flatnonzero(ratio >= mp).tolist()) | set(
                np.argsort(-z, kind="stable")[:m].tolist()
            )
            assert _kept(c.expected[r]) == keep and np.abs(ratio - mp).min() >= S.MARGIN
            assert len(keep) in (300, 3001)


def test_temperature_and_penalty_truths():
    half, zero = S._temperature_real_cases()
    assert torch.equal(half.expected, half.args[0] / 0.5)
    assert [sorted(_kept(r)) for r in zero.expected] == [[41000], [36000, 47000]]
    z = torch.tensor([[2.0, -1.0, 0.5, 3.0, 0.0]])
    assert S._penalty_truth(z, torch.tensor([[0, 1, 0, 4]]), 2.0).tolist() == [
        [1.0, -2.0, 0.5, 3.0, 0.0]
    ]
    (c,) = S._penalty_real_cases()
    x, h, pen = c.args
    seen = torch.zeros_like(x, dtype=torch.bool).scatter(-1, h, True)
    twin = torch.where(
        seen, torch.where(x > 0, x.double() / pen, x.double() * pen), x.double()
    ).float()
    assert c.compare(c.expected, twin, c) is None
    bad = c.expected.clone()
    # the oldest id of row 0: a 64-id window misses it
    i = int(h[0, 0])
    assert i not in h[0, -64:].tolist()
    bad[0, i] = x[0, i]
    assert c.compare(c.expected, bad, c) is not None


def test_sample_next_truth_is_a_distribution_over_the_300():
    (c,) = S._sample_next_real_cases()
    p = c.expected
    assert abs(float(p.sum()) - 1) < 1e-12 and int((p > 0).sum()) == 300
    x, hist = c.args[0][0].double(), c.kwargs["previous_ids"][0]
    z = x.clone()
    for i in set(hist.tolist()):
        z[i] = z[i] / 1.3 if z[i] > 0 else z[i] * 1.3
    top = np.argsort(-z.numpy(), kind="stable")[:300]
    # top-k = 300 cuts at no tie
    assert float(z[top].min()) > float(np.delete(z.numpy(), top).max())
    e = np.exp(z.numpy()[top] / 0.8)
    assert np.allclose(p.numpy()[top], e / e.sum(), rtol=1e-12)


# ------------------------------------------------------------------ sampler_strict: each test
# catches its own mistake
def _inverse(u: torch.Tensor, probs: torch.Tensor) -> torch.Tensor:
    cdf = probs.double().cumsum(-1)
    return torch.searchsorted(
        cdf, (u.double() * cdf[..., -1]).reshape(-1, 1).contiguous(), right=True
    ).reshape(-1)


def test_pairs_test_needs_both_alignments():
    four = torch.tensor([0.4, 0.3, 0.2, 0.1])
    case = Case((four.expand(4000, 4).clone(), Generator(1)), expected=four.expand(4000, 4).clone())
    cmp = sampler_strict(1e-6, pairs=True)
    u = torch.rand(4000, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    honest = _inverse(u, four)
    even = u.clone()
    even[1::2] = even[0::2]  # rows (0, 1), (2, 3), ... share a uniform
    odd = u.clone()
    odd[2::2] = odd[1:-1:2]  # rows (1, 2), (3, 4), ... share a uniform
    assert cmp(case.expected, honest, case) is None
    for dependent in (even, odd):
        ids = _inverse(dependent, four)
        assert sampler_fit(1e-6)(case.expected, ids, case) is None  # the marginals cannot tell
        assert "not independent" in cmp(case.expected, ids, case)


def test_bins_see_a_tail_drawn_in_the_wrong_place():
    *_, c = S._sample_real_cases()
    tail = c.args[0]
    g = torch.Generator().manual_seed(3)
    honest = torch.multinomial(tail.double(), 600, replacement=True, generator=g)
    low = tail.clone()
    small = low < 1e-4
    moved = small & (torch.arange(S.V_REAL) < 32768)
    # the tail's mass, drawn from ids < 32768 only
    low[moved] *= float(tail[small].sum() / tail[moved].sum())
    low[small & ~moved] = 0.0
    wrong = torch.multinomial(low.double(), 600, replacement=True, generator=g)
    assert c.compare(c.expected, list(honest), c) is None
    # token by token the tail is invisible
    assert sampler_fit(1e-6)(c.expected, list(wrong), c) is None
    assert "as a group" in c.compare(c.expected, list(wrong), c)


def test_a_correct_sampler_passes_the_pairs_test_on_many_seeds():
    # never flagged: each flag has probability < 1e-6 / 13 (the case's share of the check's budget)
    c = S._sample_real_cases()[1]
    for seed in range(20):
        g = torch.Generator().manual_seed(seed)
        draws = [torch.multinomial(c.args[0], 1, generator=g)[0] for _ in range(c.repeat)]
        assert c.compare(c.expected, draws, c) is None
