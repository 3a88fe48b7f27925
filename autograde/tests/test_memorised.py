"""Visible points need an answer that computes: outputs typed in for the public visible inputs are
refused.

The visible checks' inputs and expected values are public (they ship with course_lib), so a lookup
table of them passes every visible case. `autograde.verify.memorised` withholds a visible check's
points when the answer passes less than a third of the same exercise's *informative* hidden cases:
those that no answer computing nothing passes (`trivial_cases` runs a null zoo, the input back,
zeros, a constant, an error..., on every hidden case, in the grader). A red team read the visible
expected values at run time and fell back on the input unchanged elsewhere: a filter that keeps
everything passes the hidden cases that remove nothing, which dodged the old rule (every hidden case
failed). An answer with an edge-case bug fails some hidden cases, not most of them, and keeps its
visible points.
"""

from __future__ import annotations

import functools

import torch

from autograde.course import Course
from autograde.verify import MEMORISED_MIN_CASES, memorised, trivial_cases
from course_lib.checks.engine import CheckResult, evaluate


def _judged(course, name: str, kind: str, fn) -> CheckResult:
    hidden = kind == "hidden_check"
    registry = course.hidden_registry() if hidden else course.visible_registry()
    chk = registry.get(name)
    expected = registry.expected_values(name, chk.cases()) if hidden else None
    return evaluate(chk, fn, expected, raise_on_fail=False, quiet=True)


def _payloads(exercise: str, visible: str, hidden: str) -> dict:
    return {
        visible: {"exercise": exercise, "kind": "check"},
        hidden: {"exercise": exercise, "kind": "hidden_check"},
    }


def test_a_lookup_table_of_the_visible_cases_gets_no_visible_points():
    course = Course()
    visible = course.visible_registry().get("softmax")
    table = [
        (c.args[0].clone(), c.expected.clone())
        for c in visible.cases()
        if c.raises is None
        and isinstance(c.expected, torch.Tensor)
        and isinstance(c.args[0], torch.Tensor)
    ]

    # a student who copied the visible outputs: right wherever the inputs are public
    def lookup(logits):
        for x, y in table:
            if (
                x.shape == logits.shape
                and x.dtype == logits.dtype
                and torch.equal(torch.nan_to_num(x), torch.nan_to_num(logits))
            ):
                return y.clone()
        return torch.zeros_like(logits)

    judged = {
        "softmax": _judged(course, "softmax", "check", lookup),
        "softmax_hidden": _judged(course, "softmax_hidden", "hidden_check", lookup),
    }
    assert judged["softmax"].passed, judged["softmax"].message
    assert not judged["softmax_hidden"].passed
    out = memorised(_payloads("softmax", "softmax", "softmax_hidden"), judged)
    assert set(out) == {"softmax"} and "hidden cases" in out["softmax"]


def test_an_answer_that_computes_keeps_its_visible_points_even_with_an_edge_case_bug():
    course = Course()

    def honest(logits):
        e = torch.exp(logits - logits.amax(-1, keepdim=True))
        return e / e.sum(-1, keepdim=True)

    # computes, but wrong in half precision: fails some hidden cases, not all
    def half_blind(logits):
        if logits.dtype in (torch.float16, torch.bfloat16):
            return torch.zeros_like(logits)
        return honest(logits)

    for fn in (honest, half_blind):
        judged = {
            "softmax": _judged(course, "softmax", "check", fn),
            "softmax_hidden": _judged(course, "softmax_hidden", "hidden_check", fn),
        }
        assert judged["softmax"].passed
        assert memorised(_payloads("softmax", "softmax", "softmax_hidden"), judged) == {}


def test_few_hidden_cases_say_nothing_and_a_check_failing_whole_weighs_against_visible_points():
    """Issue 37: a lookup that raised a BaseException (or broke a rule, or sent nothing) on every
    other input turned its hidden check into one "*" failure, which the guard read as "nothing to
    say": 04 3/20 and 01 7/22 with no computation. Every way of failing the hidden cases now counts
    as failing them all."""
    payloads = _payloads("f", "f", "f_hidden")
    passed = CheckResult("f", 4, [])
    few = CheckResult(
        "f_hidden",
        MEMORISED_MIN_CASES - 1,
        [(str(i), "wrong") for i in range(MEMORISED_MIN_CASES - 1)],
    )
    assert memorised(payloads, {"f": passed, "f_hidden": few}) == {}
    # unreadable, missing, a crash, a BaseException, a time limit; a broken rule
    for whole in ("*", "rules"):
        hidden = CheckResult("f_hidden", 5, [(whole, "StepTimeout: took longer than 10 s")])
        assert set(memorised(payloads, {"f": passed, "f_hidden": hidden})) == {"f"}
    all_failed = CheckResult("f_hidden", 5, [(str(i), "wrong") for i in range(5)])
    assert set(memorised(payloads, {"f": passed, "f_hidden": all_failed})) == {"f"}
    # a visible check that failed on its own keeps its own message
    assert (
        memorised(payloads, {"f": CheckResult("f", 4, [("a", "wrong")]), "f_hidden": all_failed})
        == {}
    )


def test_a_lookup_with_a_do_nothing_fallback_gets_no_visible_points_and_an_honest_bug_keeps_them():
    course = Course()
    cases_of = functools.partial(trivial_cases, course)
    visible = course.visible_registry().get("top_k_filter")
    table = [(c.args, c.expected) for c in visible.cases() if c.raises is None]

    # a red team's: the public answer where the input is public, else the input back
    def lookup(logits, k):
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError("k must be a positive integer")
        for (x, kk), y in table:
            if (
                kk == k
                and x.shape == logits.shape
                and x.dtype == logits.dtype
                and torch.equal(x, logits)
            ):
                return y.clone()
        return logits.clone()

    # honest, but the k-th value is taken in float32 (zoo: float32_threshold)
    def float32_threshold(logits, k):
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError("k must be a positive integer")
        if k >= logits.shape[-1]:
            return logits.clone()
        kth = torch.topk(logits.float(), k, dim=-1).values[..., -1:]
        return logits.masked_fill(logits.float() < kth, float("-inf"))

    payloads = _payloads("top_k_filter", "top_k_filter", "top_k_filter_hidden")
    for fn, caught in ((lookup, True), (float32_threshold, False)):
        judged = {
            "top_k_filter": _judged(course, "top_k_filter", "check", fn),
            "top_k_filter_hidden": _judged(course, "top_k_filter_hidden", "hidden_check", fn),
        }
        assert judged["top_k_filter"].passed and not judged["top_k_filter_hidden"].passed, (
            fn.__name__
        )
        assert bool(memorised(payloads, judged, cases_of)) is caught, fn.__name__
        # the old rule (every hidden case failing) let the lookup keep its points
        assert (
            memorised(payloads, judged, lambda name: (frozenset(), frozenset())) == {} or not caught
        )


def test_the_null_zoo_marks_only_cases_an_answer_computing_nothing_passes():
    labels, trivial = trivial_cases(Course(), "top_k_filter_hidden")
    assert trivial and trivial < labels  # some (k >= V, must-raise), never all
    assert len(labels - trivial) >= MEMORISED_MIN_CASES


def test_no_count_or_rule_name_the_answers_process_chooses_reaches_a_page():
    """An answer (threat model, white-box red team 20, A3) wrote 64 bits of a hidden input onto the
    hidden check's page as a set of rule names (each on the check's own list), and the lookup
    guard's message said how many informative hidden cases passed (a count the process chooses). The
    page and the guard now say neither: for any set of reported rule names and any number passed,
    the texts are the same."""
    from autograde.verify import _public

    rules = [
        "torch.softmax",
        "torch.nn.functional.softmax",
        "torch.Tensor.softmax",
        "torch.special.softmax",
    ]
    pages = set()
    for k in range(len(rules) + 1):
        said = ", ".join(rules[:k])
        failures = [("case", "wrong")] + (
            [
                (
                    "rules",
                    f"while it ran, your function used {said}, which this "
                    "exercise asks you not to use",
                )
            ]
            if k
            else []
        )
        pages.add(
            _public(CheckResult("softmax_hidden", 30, failures, "a hint"), []).replace(
                "failed on some of its 30 cases, and the answer breaks a rule of the exercise",
                "failed on some of its 30 cases",
            )
        )
    assert len(pages) == 1 and not any(r in next(iter(pages)) for r in rules), pages
    texts = set()
    for passed in range(0, 10):  # 0..9 of 30 informative cases: all under a third
        failures = [(f"case {i}", "wrong") for i in range(30 - passed)]
        judged = {
            "softmax": CheckResult("softmax", 5, []),
            "softmax_hidden": CheckResult("softmax_hidden", 30, failures),
        }
        labels = frozenset(f"case {i}" for i in range(30))
        texts.add(
            memorised(
                _payloads("softmax", "softmax", "softmax_hidden"),
                judged,
                lambda name: (labels, frozenset()),
            )["softmax"]
        )
    assert len(texts) == 1, texts
