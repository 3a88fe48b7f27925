"""The grading pipeline as named steps (issue 36, item 3): what ``Grader._grade_in`` runs, in which
order, and that a step that stops the job stops it. Fast: fake steps over a real context;
test_grade.py grades for real."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from autograde import grade
from autograde.grade import Job, JobContext, NotebookRun, Step
from autograde.record import GradeRecord, Status

NOTEBOOK = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'


def test_the_pipeline_is_intake_run_verify_and_the_trusted_pass():
    assert [(s.name, s.per_notebook) for s in grade.PIPELINE] == [
        ("intake", False),
        ("run", True),
        ("verify", True),
        ("trusted pass", False),
    ]


def _context(tmp_path) -> JobContext:
    return JobContext(
        Job("s", "a", tmp_path), None, tmp_path, GradeRecord.start("s", "a", 1.0), {}, {}, None, 0.0
    )


def _fake_pipeline(seen: list, stop_at: str | None = None) -> tuple[Step, ...]:
    def step(name):
        def run(grader, ctx, unit: NotebookRun | None = None):
            seen.append(name if unit is None else f"{name} {unit.name}")
            if name == "intake":
                ctx.notebooks = {"n1": NOTEBOOK, "n2": NOTEBOOK}
            if seen[-1] == stop_at:
                ctx.stop(Status.TIMEOUT, "stopped here")

        return run

    return tuple(Step(s.name, step(s.name), s.per_notebook) for s in grade.PIPELINE)


@pytest.mark.parametrize(
    "stop_at, expected",
    [
        (None, ["intake", "run n1", "verify n1", "run n2", "verify n2", "trusted pass"]),
        ("run n1", ["intake", "run n1"]),
        ("verify n2", ["intake", "run n1", "verify n1", "run n2", "verify n2"]),
    ],
)
def test_each_notebook_goes_through_run_and_verify_in_turn_and_a_stop_ends_the_job(
    tmp_path, monkeypatch, stop_at, expected
):
    seen: list[str] = []
    monkeypatch.setattr(grade, "PIPELINE", _fake_pipeline(seen, stop_at))
    record = grade.Grader._grade_in(SimpleNamespace(), _context(tmp_path))
    assert seen == expected
    assert record.status == (Status.TIMEOUT if stop_at else Status.GRADED)


def test_a_job_with_nothing_rebuilt_stops_after_intake(tmp_path, monkeypatch):
    seen: list[str] = []
    steps = list(_fake_pipeline(seen))
    steps[0] = Step(
        "intake", lambda grader, ctx: (seen.append("intake"), setattr(ctx, "stopped", True))
    )
    monkeypatch.setattr(grade, "PIPELINE", tuple(steps))
    grade.Grader._grade_in(SimpleNamespace(), _context(tmp_path))
    assert seen == ["intake"]
