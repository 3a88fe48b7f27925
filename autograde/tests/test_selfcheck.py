"""Staleness detection, stored references, the bug zoo, and `selfcheck` on every real assignment.

Fixture tests: ~15 s. Real assignments: about a minute each (model forward passes, two nbgrader
runs).
"""

from __future__ import annotations

import json

import nbformat
import pytest

from autograde.course import Course
from autograde.release import release
from autograde.selfcheck import check_bugzoo, selfcheck, stale_files
from autograde.tests.conftest import REAL_ASSIGNMENTS, fixture_course
from autograde.tests.fixture import ASSIGNMENT, make_course


def test_bug_zoo_entries_are_caught_and_escapes_reported(fx_course, tmp_path):
    assert check_bugzoo(fx_course, ASSIGNMENT, min_bugs=1, log=lambda *_: None) == []
    zoo = tmp_path / "zoo"
    (zoo / ASSIGNMENT).mkdir(parents=True)
    for f in (fx_course.zoo_dir / ASSIGNMENT).glob("*.py"):
        (zoo / ASSIGNMENT / f.name).write_text(f.read_text())
    (zoo / ASSIGNMENT / "double_same.py").write_text(
        '"""Correct after all."""\nTARGET = "double"\ndef double(x):\n    return x + x\n'
    )
    (zoo / ASSIGNMENT / "typo.py").write_text('TARGET = "dubble"\ndef dubble(x):\n    return x\n')
    course = Course(**{**fx_course.__dict__, "bugzoo_dir": zoo})
    problems = check_bugzoo(course, ASSIGNMENT, min_bugs=3, log=lambda *_: None)
    assert any(
        "double_same.py (double) passes every check: Correct after all." in p for p in problems
    )
    assert any("typo.py: TARGET='dubble' is not a graded exercise" in p for p in problems)
    assert any("'square' of fx has 1 bug-zoo entries (want >= 3)" in p for p in problems)
    assert len(problems) == 3


def test_stale_notebooks_and_references_are_detected(tmp_path):
    course = fixture_course(make_course(tmp_path))
    before = stale_files(course)  # nothing released yet
    assert (
        before[0] == "notebooks/fx/fx.ipynb"
        and "fx.json is missing" in before[1]
        and len(before) == 2
    )
    release(course, log=lambda *_: None)
    assert stale_files(course) == []
    # the instructor edits the source notebook but forgets to release
    src = course.source_notebooks(ASSIGNMENT)[0]
    nb = nbformat.read(str(src), as_version=4)
    nb.cells[0].source += "\nNow with more words."
    nbformat.write(nb, str(src))
    assert stale_files(course) == ["notebooks/fx/fx.ipynb"]
    release(course, log=lambda *_: None)
    assert stale_files(course) == []
    # a stored expected value that no longer equals a fresh computation of the reference solution
    ref = course.refs_dir / f"{ASSIGNMENT}.json"
    data = json.loads(ref.read_text())
    data["checks"]["double_hidden"]["cases"][1]["expected"] = -15
    ref.write_text(json.dumps(data))
    stale = stale_files(course)
    assert (
        len(stale) == 1
        and "double_hidden/negative int: stored != fresh: expected -15, got -14" in stale[0]
    )


def test_stale_references_are_refused_when_grading(fx_course, monkeypatch):
    """A hidden check whose inputs changed after release refuses to use the old expected values."""
    import importlib
    import sys

    from autograde.hidden import HiddenRegistry
    from course_lib.checks.engine import Case

    monkeypatch.syspath_prepend(str(fx_course.pythonpath[0]))
    mod = importlib.import_module("fx_hidden.double")
    reg = HiddenRegistry("fx_hidden", fx_course.refs_dir)
    reg.hidden_check("double_hidden", lambda x: 2 * x)
    changed = mod.CHECKS[0].__class__(
        **{
            **mod.CHECKS[0].__dict__,
            "cases": lambda: [Case((1,), label="array"), Case((-7,), label="negative int")],
        }
    )
    monkeypatch.setattr(mod, "CHECKS", [changed])
    with pytest.raises(RuntimeError, match="stale"):
        HiddenRegistry("fx_hidden", fx_course.refs_dir).hidden_check(
            "double_hidden", lambda x: 2 * x
        )
    assert "fx_hidden.double" in sys.modules


@pytest.mark.parametrize("assignment", REAL_ASSIGNMENTS)
def test_course_selfcheck(assignment):
    """For each real assignment: release up to date, references 100 %, untouched 0, every bug
    caught."""
    lines = []
    assert selfcheck(Course(), [assignment], workers=2, min_bugs=5, log=lines.append), "\n".join(
        lines
    )


def test_mutants_listed_as_equivalent_are_not_run_and_stale_listings_are_reported(tmp_path):
    from autograde.exercises import exercise_checks
    from autograde.mutants import equivalents_path, mutation_report

    course = fixture_course(make_course(tmp_path))
    release(course, log=lambda *_: None)
    _, by_exercise = exercise_checks(course, ASSIGNMENT)
    first = mutation_report(course, ASSIGNMENT, by_exercise, log=lambda *_: None)
    killed = next(v.mutant.key for v in first.verdicts if v.killed)
    assert first.kill_rate == 1.0 and len(first.counted) == len(first.verdicts) > 1
    equivalents_path(course, ASSIGNMENT).parent.mkdir(parents=True)
    equivalents_path(course, ASSIGNMENT).write_text(
        json.dumps({killed: "listed by hand", "double L9: gone": "no longer generated"})
    )
    rep = mutation_report(course, ASSIGNMENT, by_exercise, log=lambda *_: None)
    listed = [v for v in rep.verdicts if v.mutant.key == killed]
    assert [(v.killed, v.by, v.seconds) for v in listed] == [
        (False, "not run: listed as equivalent", 0.0)
    ]
    assert len(rep.counted) == len(first.verdicts) - 1 and rep.kill_rate == 1.0
    assert rep.stale_equivalents() == ["double L9: gone"]
