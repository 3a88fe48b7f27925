"""Checks for notebook exercises: the engine (``engine``), one module of visible checks per topic,
and ``check_all``, the student's "check my work" summary (like Otter's ``grader.check_all()``)."""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple

from course_lib.checks.engine import (
    HISTORY,
    MISSING,
    VISIBLE,
    Case,
    Check,
    CheckFailed,
    CheckResult,
    Generator,
    Outcome,
    Registry,
    Resource,
    allclose,
    check,
    evaluate,
    exact,
    failing_upstream,
    judge,
    multinomial_fit,
    not_attempted,
    register_resource,
    rule_failures,
    run_cases,
    set_equal,
)

__all__ = [
    "FAILED",
    "NOT_ATTEMPTED",
    "NOT_RUN",
    "PASSED",
    "HISTORY",
    "Case",
    "Check",
    "CheckFailed",
    "CheckResult",
    "Generator",
    "Outcome",
    "Registry",
    "Resource",
    "Status",
    "allclose",
    "check",
    "check_all",
    "evaluate",
    "exact",
    "judge",
    "multinomial_fit",
    "register_resource",
    "run_cases",
    "set_equal",
    "visible_checks",
]

PASSED, FAILED, NOT_ATTEMPTED, NOT_RUN = "passed", "failed", "not attempted", "not run"

# The registry of visible checks (engine.VISIBLE imports these names and nothing else of this
# folder): one module per notebook, each with ASSIGNMENT and CHECKS, in the course's order; and the
# engine's modules it imports when first needed, loaded with the checks so that the verification
# seals them before any cell runs (autograde/inside/relay.py _Seal). Grading-only modules are named
# by the grader (autograde/course.py GRADING_ONLY_MODULES). autograde/tests/test_registries.py:
# every name resolves, no module is left out.
CHECK_MODULES = (
    "pipeline_trace",
    "logits_softmax",
    "sampling",
    "generation_loop",
    "debugging_generation",
)
ENGINE_MODULES = ("rules", "trace", "toy_models")


class Status(NamedTuple):
    """One row of the ``check_all`` table."""

    name: str  # the check's name
    exercise: str  # the function it calls
    status: str  # passed / failed / not attempted / not run
    detail: str = ""


def visible_checks(assignment: str) -> list[Check]:
    """The visible checks of one assignment, in the order their module lists them (the notebook's
    order)."""
    modules = []
    for _, mod in VISIBLE.all():
        if getattr(mod, "ASSIGNMENT", None) == assignment and mod not in modules:
            modules.append(mod)
    if not modules:
        known = sorted({getattr(m, "ASSIGNMENT", "?") for _, m in VISIBLE.all()})
        raise KeyError(f"no visible checks for assignment {assignment!r}; known: {known}")
    return [c for mod in modules for c in mod.CHECKS]


def run_check(chk: Check, namespace: Mapping[str, Any]) -> tuple[Status, CheckResult | None]:
    """Run one visible check on the function the namespace holds; never raises for the student's
    errors."""
    fn = namespace.get(chk.exercise)
    if fn is None:
        return Status(
            chk.name, chk.exercise, NOT_RUN, f"`{chk.exercise}` is not defined: run its cell"
        ), None
    cases = chk.cases()
    missing = [c.label for c in cases if c.expected is MISSING and c.raises is None]
    if missing:  # a visible check always carries its expected values; this is a course bug, say so
        return Status(
            chk.name, chk.exercise, FAILED, f"internal: cases {missing} have no expected value"
        ), None
    outcomes = run_cases(chk, fn, cases)
    if not_attempted(outcomes):
        return Status(
            chk.name, chk.exercise, NOT_ATTEMPTED, "still raises NotImplementedError"
        ), None
    result = judge(chk, cases, outcomes, [c.expected for c in cases])
    result.failures += rule_failures(chk, fn)
    if result.passed:
        return Status(
            chk.name, chk.exercise, PASSED, f"{result.n_cases}/{result.n_cases} cases"
        ), result
    label, why = result.failures[0]
    first = why.splitlines()[0] if why else ""
    bad = sum(1 for lab, _ in result.failures if lab != "rules")
    detail = (
        f"{bad} of {result.n_cases} cases failed; first: {label!r}: {first}"
        if label != "rules"
        else f"breaks a rule of the exercise: {first}"
    )
    # the cause may be another exercise: named first (issue 35)
    if upstream := failing_upstream(chk, fn):
        which = "which fails its" if len(upstream) == 1 else "which fail their"
        detail = f"calls your {', '.join(upstream)}, {which} own check: fix that first; " + detail
    return Status(chk.name, chk.exercise, FAILED, detail), result


def check_all(namespace: Mapping[str, Any], assignment: str, *, show: bool = True) -> list[Status]:
    """Run every visible check of ``assignment`` on the functions in ``namespace`` (pass
    ``globals()``) and print a summary table: passed / failed / not attempted / not run. Never
    raises for a failing answer.

    This is the student's own check, not a grade: hidden checks and written answers are graded
    separately.
    """
    rows = [run_check(chk, namespace)[0] for chk in visible_checks(assignment)]
    if show:
        print(format_table(rows, assignment))
    return rows


def format_table(rows: list[Status], assignment: str = "") -> str:
    """The plain-text table ``check_all`` prints (monospace, so it reads the same in every front
    end)."""
    marks = {PASSED: "✓", FAILED: "✗", NOT_ATTEMPTED: "·", NOT_RUN: "?"}
    w = max([len("check")] + [len(r.name) for r in rows])
    lines = [
        f"Visible checks{' of ' + assignment if assignment else ''}:",
        "",
        f"   {'check':<{w}}  {'status':<13}  detail",
    ]
    for r in rows:
        detail = r.detail if len(r.detail) <= 100 else r.detail[:97] + "..."
        lines.append(f" {marks[r.status]} {r.name:<{w}}  {r.status:<13}  {detail}")
    counts = {s: sum(r.status == s for r in rows) for s in marks}
    lines += [
        "",
        f"{counts[PASSED]} passed, {counts[FAILED]} failed, {counts[NOT_ATTEMPTED]} not attempted"
        + (f", {counts[NOT_RUN]} not run" if counts[NOT_RUN] else "")
        + f" (of {len(rows)}). Hidden checks and written answers are graded separately.",
    ]
    return "\n".join(lines)
