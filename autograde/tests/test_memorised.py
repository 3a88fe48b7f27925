"""Visible points need an answer that computes: outputs typed in for the public visible inputs are refused.

The visible checks' inputs and expected values are public (they ship with course_lib), so a lookup table of
them passes every visible case. `autograde.verify.memorised` withholds a visible check's points when every
case of the same exercise's hidden checks (other inputs) fails; an answer with an edge-case bug fails some
hidden cases, never all of them, and keeps its visible points.
"""

from __future__ import annotations

import torch

from autograde.course import Course
from autograde.verify import MEMORISED_MIN_CASES, memorised
from course_lib.checks.engine import CheckResult, evaluate


def _judged(course, name: str, kind: str, fn) -> CheckResult:
    hidden = kind == "hidden_check"
    registry = course.hidden_registry() if hidden else course.visible_registry()
    chk = registry.get(name)
    expected = registry.expected_values(name, chk.cases()) if hidden else None
    return evaluate(chk, fn, expected, raise_on_fail=False, quiet=True)


def _payloads(exercise: str, visible: str, hidden: str) -> dict:
    return {visible: {"exercise": exercise, "kind": "check"}, hidden: {"exercise": exercise, "kind": "hidden_check"}}


def test_a_lookup_table_of_the_visible_cases_gets_no_visible_points():
    course = Course()
    visible = course.visible_registry().get("softmax")
    table = [(c.args[0].clone(), c.expected.clone()) for c in visible.cases()
             if c.raises is None and isinstance(c.expected, torch.Tensor) and isinstance(c.args[0], torch.Tensor)]

    def lookup(logits):  # a student who copied the visible outputs: right wherever the inputs are public
        for x, y in table:
            if x.shape == logits.shape and x.dtype == logits.dtype and torch.equal(torch.nan_to_num(x), torch.nan_to_num(logits)):
                return y.clone()
        return torch.zeros_like(logits)

    judged = {"softmax": _judged(course, "softmax", "check", lookup),
              "softmax_hidden": _judged(course, "softmax_hidden", "hidden_check", lookup)}
    assert judged["softmax"].passed, judged["softmax"].message
    assert not judged["softmax_hidden"].passed
    out = memorised(_payloads("softmax", "softmax", "softmax_hidden"), judged)
    assert set(out) == {"softmax"} and "hidden cases" in out["softmax"]


def test_an_answer_that_computes_keeps_its_visible_points_even_with_an_edge_case_bug():
    course = Course()

    def honest(logits):
        e = torch.exp(logits - logits.amax(-1, keepdim=True))
        return e / e.sum(-1, keepdim=True)

    def half_blind(logits):  # computes, but wrong in half precision: fails some hidden cases, not all
        if logits.dtype in (torch.float16, torch.bfloat16):
            return torch.zeros_like(logits)
        return honest(logits)

    for fn in (honest, half_blind):
        judged = {"softmax": _judged(course, "softmax", "check", fn),
                  "softmax_hidden": _judged(course, "softmax_hidden", "hidden_check", fn)}
        assert judged["softmax"].passed
        assert memorised(_payloads("softmax", "softmax", "softmax_hidden"), judged) == {}


def test_too_few_hidden_cases_or_unreadable_outcomes_say_nothing():
    payloads = _payloads("f", "f", "f_hidden")
    passed = CheckResult("f", 4, [])
    few = CheckResult("f_hidden", MEMORISED_MIN_CASES - 1, [(str(i), "wrong") for i in range(MEMORISED_MIN_CASES - 1)])
    unreadable = CheckResult("f_hidden", 5, [("*", "unreadable outcomes")])
    rules_only = CheckResult("f_hidden", 5, [("rules", "used torch.softmax")])
    for hidden in (few, unreadable, rules_only):
        assert memorised(payloads, {"f": passed, "f_hidden": hidden}) == {}
    all_failed = CheckResult("f_hidden", 5, [(str(i), "wrong") for i in range(5)])
    assert set(memorised(payloads, {"f": passed, "f_hidden": all_failed})) == {"f"}
    # a visible check that failed on its own keeps its own message
    assert memorised(payloads, {"f": CheckResult("f", 4, [("a", "wrong")]), "f_hidden": all_failed}) == {}
