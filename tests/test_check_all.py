"""`course_lib.checks.check_all`: the student's "check my work" table.

The reference solution's own cells (from solutions/, which selfcheck proves score full marks) must
come out "passed"; nbgrader's stub (`raise NotImplementedError()`) "not attempted"; a wrong answer
"failed"; a function that was never defined "not run". Cost: ~1 s (notebook 02's cheap exercises
only; no model).
"""

from __future__ import annotations

import json
import linecache
from pathlib import Path

import pytest
import torch

from course_lib.checks import FAILED, NOT_ATTEMPTED, NOT_RUN, PASSED, check_all, visible_checks

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = [
    "01_pipeline_trace",
    "02_logits_softmax",
    "03_sampling",
    "04_generation_loop",
    "05_debugging_generation",
]


def solution_namespace(assignment: str, grade_ids: set[str]) -> dict:
    """Globals after running the named solution cells of an instructor notebook (with the markers
    left in)."""
    nb = json.loads((ROOT / "solutions" / assignment / f"{assignment}.ipynb").read_text())
    ns: dict = {"torch": torch}
    found = set()
    for cell in nb["cells"]:
        gid = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if cell["cell_type"] == "code" and gid in grade_ids:
            source = "".join(cell["source"])
            # as Jupyter does: the cell's text is where the readings find it (a function with no
            # text breaks every rule, as one made from a string does)
            linecache.cache[f"<{gid}>"] = (len(source), None, source.splitlines(True), f"<{gid}>")
            exec(compile(source, f"<{gid}>", "exec"), ns)
            found.add(gid)
    assert found == grade_ids, f"solution cells not found: {grade_ids - found}"
    return ns


def test_reference_passes_stub_not_attempted_wrong_failed_missing_not_run(capsys):
    ns = solution_namespace("02_logits_softmax", {"softmax", "entropy"})

    def log_softmax(logits):  # nbgrader's stub, as in notebooks/
        raise NotImplementedError()

    def probs_at_temperature(logits, temperature):  # wrong: forgets to divide by T
        return torch.softmax(logits, dim=-1)

    ns.update(log_softmax=log_softmax, probs_at_temperature=probs_at_temperature)
    rows = check_all(ns, "02_logits_softmax")
    got = {r.name: r.status for r in rows}
    assert got == {
        "softmax": PASSED,
        "log_softmax": NOT_ATTEMPTED,
        "probs_at_temperature": FAILED,
        "entropy": PASSED,
        "sequence_logprob": NOT_RUN,
        "perplexity": NOT_RUN,
    }
    table = capsys.readouterr().out
    assert "2 passed, 1 failed, 1 not attempted, 2 not run (of 6)" in table
    for name in got:
        assert name in table


def test_partly_written_answer_is_failed_not_hidden():
    # raises NotImplementedError only for batches: some cases pass, so it is "failed"
    def softmax(logits):
        if logits.dim() > 1:
            raise NotImplementedError("batches")
        return torch.softmax(logits, dim=-1)

    (row,) = [
        r
        for r in check_all({"softmax": softmax}, "02_logits_softmax", show=False)
        if r.name == "softmax"
    ]
    assert row.status == FAILED and "cases failed" in row.detail, row


def test_every_assignment_has_its_checks_in_notebook_order():
    for assignment in ASSIGNMENTS:
        nb = json.loads((ROOT / "solutions" / assignment / f"{assignment}.ipynb").read_text())
        calls = [
            line.split('"')[1]
            for c in nb["cells"]
            if c["cell_type"] == "code"
            for line in "".join(c["source"]).splitlines()
            if line.startswith('check("')
        ]
        assert [c.name for c in visible_checks(assignment)] == calls, assignment


def test_unknown_assignment_names_the_known_ones():
    with pytest.raises(KeyError, match="02_logits_softmax"):
        check_all({}, "99_nope")


def test_a_test_cell_lets_run_all_go_on_for_an_unanswered_exercise_but_fails_when_graded(
    capsys, monkeypatch
):
    """Issue 35: "Run All" on a partly done notebook reaches the end: an unanswered exercise's test
    cell prints "not attempted" instead of raising; under the grader (COURSE_GRADING=1, which it
    sets in the kernel) the same cell raises, so nbgrader scores it 0; a half-written answer that
    raises NotImplementedError on some inputs only still fails, so its passing cases are not
    hidden."""
    from course_lib.checks import CheckFailed, check

    def softmax(logits):
        raise NotImplementedError()

    def half(logits):
        if logits.dim() > 1:
            raise NotImplementedError("batches later")
        return torch.softmax(logits, -1)

    monkeypatch.delenv("COURSE_GRADING", raising=False)
    assert check("softmax", softmax) is None
    assert "softmax: not attempted yet" in capsys.readouterr().out
    with pytest.raises(CheckFailed):
        check("softmax", half)
    monkeypatch.setenv("COURSE_GRADING", "1")
    with pytest.raises(CheckFailed, match="NotImplementedError"):
        check("softmax", softmax)
