"""The visible checks' machinery ("check my work"): every notebook's checks are there, and the table
tells an untouched exercise, a missing one and a wrong one apart. Under a second after the imports.

(No test here can hold a right answer: this folder ships to students.)
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from course_lib.checks import FAILED, NOT_ATTEMPTED, NOT_RUN, check_all, visible_checks

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = sorted(p.name for p in (ROOT / "notebooks").iterdir() if p.is_dir())


def test_the_course_has_five_notebooks():
    assert ASSIGNMENTS == [
        "01_pipeline_trace",
        "02_logits_softmax",
        "03_sampling",
        "04_generation_loop",
        "05_debugging_generation",
    ]


def check_my_work_cells(assignment: str) -> list[str]:
    nb = json.loads(
        (ROOT / "notebooks" / assignment / f"{assignment}.ipynb").read_text(encoding="utf-8")
    )
    return [
        c["source"] for c in nb["cells"] if c["cell_type"] == "code" and "check_all(" in c["source"]
    ]


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_notebook_checks_its_own_exercises(assignment):
    assert [
        f'check_all(globals(), "{assignment}")' in src for src in check_my_work_cells(assignment)
    ] == [True]
    exercises = {c.exercise for c in visible_checks(assignment)}
    assert exercises
    nb = (ROOT / "notebooks" / assignment / f"{assignment}.ipynb").read_text(encoding="utf-8")
    # each checked function is an exercise of that notebook
    for name in exercises:
        assert f"def {name}(" in nb, name


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_table_tells_not_run_not_attempted_and_failed_apart(assignment):
    exercises = sorted({c.exercise for c in visible_checks(assignment)})
    assert {r.status for r in check_all({}, assignment, show=False)} == {NOT_RUN}

    def stub(*args, **kwargs):
        raise NotImplementedError()

    rows = check_all({name: stub for name in exercises}, assignment, show=False)
    assert {r.status for r in rows} == {NOT_ATTEMPTED}

    def wrong(*args, **kwargs):
        return "not an answer"

    rows = check_all({name: wrong for name in exercises}, assignment, show=False)
    assert {r.status for r in rows} == {FAILED}, [r for r in rows if r.status != FAILED]
