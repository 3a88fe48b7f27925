"""Generated hidden cases (autograde.generated): stored, complete, deterministic, inside what the
texts allow."""

from __future__ import annotations

import json

import pytest
import torch

from autograde import generated, strategies
from autograde.course import Course
from autograde.inside.codec import encode


def _declared() -> dict[str, tuple[str, str, int]]:
    """{check: (assignment, strategy, count)} over the course's hidden modules."""
    out = {}
    for _, module in Course().hidden_registry().all():
        for check, (strategy, count) in getattr(module, "GENERATED", {}).items():
            out[check] = (module.ASSIGNMENT, strategy, count)
    return out


def test_every_declared_check_has_its_cases_stored_and_in_its_check():
    declared = _declared()
    assert len(declared) >= 13
    registry = Course().hidden_registry()
    for check, (assignment, strategy, count) in declared.items():
        stored = generated.cases(assignment, check)
        assert len(stored) == count, (
            f"{check}: {len(stored)} stored, {count} declared (run release)"
        )
        labels = [c.label for c in registry.get(check).cases()]
        assert sum(label.startswith("generated ") for label in labels) == count, check


def test_a_draw_is_the_same_every_time():
    for name in ("softmax_call", "find_cycle_call"):
        a = generated.draw(strategies.STRATEGIES[name](), 10, 7)
        b = generated.draw(strategies.STRATEGIES[name](), 10, 7)
        assert json.dumps(encode(a)) == json.dumps(encode(b))
        assert len({json.dumps(encode(c)) for c in a}) == len(a)  # distinct calls


@pytest.mark.parametrize("check", sorted(_declared()))
def test_stored_inputs_stay_inside_what_the_text_allows(check):
    assignment, strategy, _ = _declared()[check]
    for case in generated.cases(assignment, check):
        for x in case.args:
            if isinstance(x, torch.Tensor) and x.is_floating_point():
                assert not torch.isnan(x).any()
                assert torch.isfinite(x).reshape(-1, x.shape[-1]).any(-1).all(), (
                    "a row of -inf only"
                )
                if strategy not in ("greedy_call", "top_k_call"):
                    assert x.dtype in (torch.float32, torch.float64), (
                        "half precision where the text asks none"
                    )
        if strategy == "entropy_call":
            p = case.args[0].double()
            assert (p >= 0).all() and torch.allclose(p.sum(-1), torch.ones(()).double(), atol=1e-5)
