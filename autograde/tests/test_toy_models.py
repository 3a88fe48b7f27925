"""The toy models that hold an exercise's rule (no autograd, one pass, a bounded loop) by refusing a
call cannot be stepped around (white-box red team 22, C5): the refusal is the only way to their
logits."""

from __future__ import annotations

import pytest
import torch

import course_lib.checks.generation_loop  # noqa: F401  (registers the resources)
import course_lib.checks.logits_softmax  # noqa: F401
import course_lib.checks.pipeline_trace  # noqa: F401
from course_lib.checks.engine import Resource, _resolve

# (resource, a call that breaks its rule, run before it or not)
GUARDED = {
    "nb01_pow2_lm_nograd": torch.tensor([[1, 2]]),
    "nb02_next_id_lm_nograd": torch.tensor([[1, 2]]),
    "nb02_next_id_lm_one_pass": torch.tensor([[0, 1]]),
    "nb04_next_id_lm_3calls": None,
}


def _broken_call(name: str, model):
    """Make the rule-breaking call (for the call limit: a fourth call of one generation)."""
    if name == "nb04_next_id_lm_3calls":
        ids = torch.tensor([[1]])
        for _ in range(3):
            model(ids)
            ids = torch.cat([ids, ids[:, -1:] + 1], 1)
        return model(ids)
    return model(GUARDED[name])


@pytest.mark.parametrize("name", sorted(GUARDED))
def test_a_guard_model_refuses_and_nothing_else_reaches_its_logits(name):
    model = _resolve(Resource(name), {})
    with pytest.raises(RuntimeError):
        _broken_call(name, model)
    # red team 22's route: the parent class's forward, without the refusal
    with pytest.raises(NotImplementedError):
        super(type(model), model).forward(torch.tensor([[1]]))
    # no attribute, parameter or buffer holds the table: only an empty anchor for the device and
    # dtype
    held = [v for v in vars(model).values() if isinstance(v, torch.Tensor)]
    held += [p for p in model.parameters()] + [b for b in model.buffers()]
    assert all(t.numel() == 0 for t in held), [t.shape for t in held]
    assert (
        next(model.parameters()).device.type == "cpu"
        and next(model.parameters()).dtype == torch.float32
    )


def test_a_guard_model_answers_a_call_that_keeps_its_rule():
    with torch.no_grad():
        out = _resolve(Resource("nb02_next_id_lm_nograd"), {})(torch.tensor([[1, 2]]))
    assert out.shape == (1, 2, 8) and out.dtype == torch.float32
    # the control: the same values as the unguarded toy model
    plain = _resolve(Resource("nb02_next_id_lm"), {})(torch.tensor([[1, 2]]))
    assert torch.equal(out, plain)
