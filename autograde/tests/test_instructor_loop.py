"""The instructor's whole loop on the fixture course: grade -> manual marks -> feedback -> export ->
regrade.

Manual marks are entered the way formgrader enters them (nbgrader's Gradebook API on
OUT/gradebook.db). What must hold: the feedback page shows the manual score and the grader's comment
and no hidden test or rubric; grades.csv, Canvas and Moodle exports show the final score with status
`graded`; a regrade with nothing changed keeps every manual mark; a regrade that changes an
autograded answer keeps the manual marks of unchanged written answers; a changed written answer goes
back to needs_manual_grade. formgrader's own "Generate Feedback" (nbgrader generate_feedback with
OUT/nbgrader_config.py) is hidden-free too. Needs root and bubblewrap; ~1 min on 2 cores (three
gradings of two students).
"""

from __future__ import annotations

import csv
import html
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograde import sandbox
from autograde.grade import Limits, grade
from autograde.gradebook import export, regenerate_feedback
from autograde.lms import export_grades
from autograde.tests.conftest import student_notebook, submit

pytestmark = pytest.mark.skipif(
    sandbox.unavailable() is not None, reason=f"no sandbox: {sandbox.unavailable()}"
)

LIMITS = Limits(wall_s=120, memory_bytes=2 << 30)
CORRECT = {
    "double": "def double(x):\n    return x * 2\n",
    "square": "def square(x):\n    return x ** 2\n",
    "a_why": "Because 2x = x + x by distributivity.",
}
COMMENT = "Right idea; name the law you use."


def _rows(out: Path) -> dict[str, dict]:
    with open(out / "grades.csv") as f:
        return {r["student"]: r for r in csv.DictReader(f)}


def _mark(out: Path, student: str, score: float, comment: str) -> None:
    """What formgrader does when a grader types a score and a comment for the written answer."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        g = gb.find_grade("a_why", "fx", "fx", student)
        g.manual_score = score
        g.needs_manual_grade = False  # as formgrader's grade handler does once a score is entered
        c = gb.find_comment("a_why", "fx", "fx", student)
        c.manual_comment = comment
        gb.db.commit()


def _page_text(out: Path, student: str) -> str:
    page = (out / "feedback" / student / "fx" / "fx.html").read_text()
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def test_manual_marks_reach_feedback_and_exports_and_survive_regrading(fx_course, tmp_path):
    subs, out = tmp_path / "submitted", tmp_path / "out"
    submit(subs, "alice", student_notebook(fx_course, CORRECT))
    submit(
        subs,
        "bob",
        student_notebook(fx_course, {**CORRECT, "double": "def double(x):\n    return x + 2\n"}),
    )
    grade(fx_course, subs, out, limits=LIMITS, log=lambda *_: None)
    assert {s: (r["score"], r["status"]) for s, r in _rows(out).items()} == {
        "alice": ("3", "needs_manual_grade"),
        "bob": ("1", "needs_manual_grade"),
    }

    _mark(out, "alice", 1.0, COMMENT)
    _mark(out, "bob", 0.5, "Half right.")
    pages = regenerate_feedback(out)
    export(out)
    assert len(pages) == 2
    assert {s: (r["score"], r["status"]) for s, r in _rows(out).items()} == {
        "alice": ("4", "graded"),
        "bob": ("1.5", "graded"),
    }
    text = _page_text(out, "alice")
    assert COMMENT in text and "4.0 / 4.0" in text.replace("4 / 4", "4.0 / 4.0")
    assert "BEGIN HIDDEN TESTS" not in text and "hidden_check" not in text
    # the rubric (model answer) stays in the instructor's view
    assert "Multiplication distributes" not in text

    for lms in ("canvas", "moodle"):
        dest = tmp_path / f"{lms}.csv"
        export_grades(out, dest, lms, log=lambda *_: None)
        rows = list(csv.reader(dest.open()))
        # Canvas: a Points Possible row follows the header
        body = rows[2:] if lms == "canvas" else rows[1:]
        # Moodle: Lateness follows
        assert [r[rows[0].index("fx")] for r in body] == ["4", "1.5"], rows

    # the same command again, nothing changed: every manual mark stands
    grade(fx_course, subs, out, limits=LIMITS, log=lambda *_: None)
    assert {s: (r["score"], r["status"]) for s, r in _rows(out).items()} == {
        "alice": ("4", "graded"),
        "bob": ("1.5", "graded"),
    }

    # bob fixes `double` (an autograded answer), alice rewrites her written answer
    submit(subs, "bob", student_notebook(fx_course, CORRECT))
    submit(subs, "alice", student_notebook(fx_course, {**CORRECT, "a_why": "Since x + x = 2x."}))
    grade(fx_course, subs, out, limits=LIMITS, log=lambda *_: None)
    rows = _rows(out)
    # 3 autograded + his 0.5 kept
    assert (rows["bob"]["score"], rows["bob"]["status"]) == ("3.5", "graded")
    # her answer changed: it needs a new look
    assert rows["alice"]["status"] == "needs_manual_grade"


def test_formgraders_feedback_button_is_hidden_free(fx_course, tmp_path):
    """formgrader's Generate Feedback runs `nbgrader generate_feedback` in OUT with
    OUT/nbgrader_config.py."""
    subs, out = tmp_path / "submitted", tmp_path / "out"
    submit(subs, "carol", student_notebook(fx_course, CORRECT))
    grade(fx_course, subs, out, limits=LIMITS, log=lambda *_: None)
    (out / "feedback").rename(out / "feedback-ours")
    env_path = str(Path(sys.executable).parent)
    import os

    env = {
        **os.environ,
        "PATH": env_path + os.pathsep + os.environ.get("PATH", ""),
        "PYTHONPATH": os.pathsep.join(fx_course.path_entries()),
    }
    r = subprocess.run(
        [sys.executable, "-m", "nbgrader", "generate_feedback", "fx", "--force"],
        cwd=out,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    text = _page_text(out, "carol")
    assert "double" in text  # a real page ...
    for secret in ("BEGIN HIDDEN TESTS", "hidden_check", "Multiplication distributes"):
        assert secret not in text, secret  # ... without hidden tests or the rubric
