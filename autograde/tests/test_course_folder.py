"""One nbgrader course folder for the whole course (issue 34, item 7): every assignment in one OUT,
which formgrader serves whole, as a formgrader service on a hub serves one course root.

A two-assignment course (the fixture's ``fx`` and a second, ``fy``: ``triple`` 2 points, a written
answer 1) is graded with real nbgrader: ``fx`` into an older per-assignment folder (the layout
earlier terms used), ``fy`` into the course folder; ``course-folder --from`` folds ``fx`` in with
the manual mark a grader gave there; then ``fy`` is regraded after a resubmission. Truth: the points
written in the notebooks (fx: 2 + 1 + 1 by hand; fy: 2 + 1 by hand), what nbgrader's own Gradebook
and NbGraderAPI (the object formgrader's pages call) report, and the mark as typed. Needs
bubblewrap; ~1-2 min on 2 shared cores (four gradings, one release).
"""

from __future__ import annotations

import csv
import json
import threading
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograde import sandbox
from autograde.course import LOCK, Course, hold
from autograde.grade import Limits, grade
from autograde.gradebook import course_folder
from autograde.tests import fixture

LIMITS = Limits(wall_s=120, memory_bytes=2 << 30)
VISIBLE = fixture.VISIBLE.replace(
    'REGISTRY = Registry("fx_checks")',
    """\
def _triple_cases():
    return [Case((2,), label="2", expected=6), Case((-1.5,), label="-1.5", expected=-4.5)]

CHECKS.append(Check("triple", "triple", _triple_cases, allclose(), hint="three times x"))
REGISTRY = Registry("fxy_checks")""",
)


def _fy_notebook() -> nbformat.NotebookNode:
    meta = fixture._meta
    nb = new_notebook(
        cells=[
            new_markdown_cell("# Second assignment\nTriple numbers."),
            new_code_cell(
                "def triple(x):\n    ### BEGIN SOLUTION\n    return 3 * x\n    ### END SOLUTION",
                metadata=meta("triple", solution=True),
            ),
            new_code_cell(
                '"""triple: triples numbers"""\nfrom fxy_checks import check\ncheck(\'triple\', '
                "triple)",
                metadata=meta("test_triple", grade=True, locked=True, points=2),
            ),
            new_markdown_cell(
                "Is 3 * x the same as x + x + x?", metadata=meta("q_three", locked=True)
            ),
            new_markdown_cell(
                "Yes: 3x = (1 + 1 + 1)x.",
                metadata=meta("b_why", solution=True, grade=True, points=1),
            ),
        ]
    )
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


@pytest.fixture(scope="module")
def two(tmp_path_factory) -> Course:
    """The fixture course under its own package names (fxy_*: another course's fx_checks may be
    imported in this process) plus the assignment fy; released."""
    from autograde.release import release
    from autograde.tests.conftest import fixture_course

    root = fixture.make_course(tmp_path_factory.mktemp("fxy"))
    lib = root / "pylib"
    (lib / "fx_checks.py").rename(lib / "fxy_checks.py")
    (lib / "fxy_checks.py").write_text(VISIBLE)
    (lib / "fx_hidden").rename(lib / "fxy_hidden")
    hidden = lib / "fxy_hidden" / "double.py"
    hidden.write_text(hidden.read_text().replace("fx_checks", "fxy_checks"))
    src = root / "solutions" / "fx" / "fx.ipynb"
    src.write_text(
        src.read_text().replace("fx_checks", "fxy_checks").replace("fx_hidden", "fxy_hidden")
    )
    (root / "solutions" / "fy").mkdir()
    nbformat.write(_fy_notebook(), root / "solutions" / "fy" / "fy.ipynb")
    base = fixture_course(root)
    course = Course(
        root=root,
        visible_package="fxy_checks",
        hidden_package="fxy_hidden",
        references_dir=lib / "fxy_hidden" / "references",
        bugzoo_dir=base.bugzoo_dir,
        pythonpath=base.pythonpath,
        cell_timeout=base.cell_timeout,
    )
    release(course, log=lambda *_: None)
    return course


def _submit(course: Course, subs: Path, student: str, a: str, answers: dict[str, str]) -> None:
    nb = json.loads(course.release_notebook(a, a).read_text())
    for cell in nb["cells"]:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid in answers:
            cell["source"] = answers[gid]
    path = subs / student / a / f"{a}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb))


def _rows(out: Path) -> dict[tuple[str, str], tuple[str, str]]:
    with open(out / "grades.csv", newline="") as f:
        return {
            (r["student"], r["assignment"]): (r["score"], r["status"]) for r in csv.DictReader(f)
        }


def _formgraders_view(out: Path) -> dict[str, list[str]]:
    """What formgrader's pages list: each assignment (Manage Assignments) and its autograded
    submissions (Manage Submissions), from NbGraderAPI (formgrader's handlers call it) configured by
    OUT/nbgrader_config.py, the file formgrader reads in its course root."""
    from nbgrader.apps import NbGraderAPI
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(out)).load_config()
    api = NbGraderAPI(config=config)
    return {
        a["name"]: sorted(s["student"] for s in api.get_submissions(a["name"]) if s["autograded"])
        for a in api.get_assignments()
    }


def _marked(out: Path, a: str, nb: str, cell: str, student: str) -> tuple:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        g, c = gb.find_grade(cell, nb, a, student), gb.find_comment(cell, nb, a, student)
        return g.manual_score, g.needs_manual_grade, c.manual_comment


FX = {
    "double": "def double(x):\n    return x * 2\n",
    "square": "def square(x):\n    return x ** 2\n",
    "a_why": "Because 2x = x + x.",
}
FY = {"triple": "def triple(x):\n    return 3 * x\n", "b_why": "Yes, by distributivity."}


@pytest.mark.skipif(
    sandbox.unavailable() is not None, reason=f"no sandbox: {sandbox.unavailable()}"
)
def test_one_course_folder_holds_every_assignment_and_keeps_marks_across_regrades(two, tmp_path):
    from nbgrader.api import Gradebook

    subs, old, out = tmp_path / "submitted", tmp_path / "graded-fx", tmp_path / "graded"
    _submit(two, subs, "alice", "fx", FX)
    # 2x only at x = 2
    _submit(two, subs, "bob", "fx", {**FX, "double": "def double(x):\n    return x + 2\n"})
    _submit(two, subs, "alice", "fy", FY)
    # last term's layout
    grade(two, subs, old, limits=LIMITS, assignments=["fx"], log=lambda *_: None)
    grade(two, subs, out, limits=LIMITS, assignments=["fy"], log=lambda *_: None)
    # formgrader in graded-fx: alice's written answer
    with Gradebook(f"sqlite:///{old / 'gradebook.db'}") as gb:
        g = gb.find_grade("a_why", "fx", "fx", "alice")
        g.manual_score, g.needs_manual_grade = 1.0, False
        gb.find_comment("a_why", "fx", "fx", "alice").manual_comment = "Name the law."
        gb.db.commit()

    done = course_folder(out, two, [old], log=lambda *_: None)
    assert (done.assignments, done.folded, done.marks) == (["fx", "fy"], {"fx": 2}, 1)
    assert _formgraders_view(out) == {"fx": ["alice", "bob"], "fy": ["alice"]}
    assert _marked(out, "fx", "fx", "a_why", "alice") == (1.0, False, "Name the law.")
    assert _rows(out) == {
        ("alice", "fx"): ("4", "graded"),
        ("bob", "fx"): ("1", "needs_manual_grade"),
        ("alice", "fy"): ("2", "needs_manual_grade"),
        ("bob", "fy"): ("0", "missing"),
    }
    for student, a in (("alice", "fx"), ("bob", "fx"), ("alice", "fy")):
        assert (out / "autograded" / student / a / f"{a}.ipynb").is_file()
        assert (out / "feedback" / student / a / f"{a}.html").is_file()
    config = (out / "nbgrader_config.py").read_text()
    assert f"c.CourseDirectory.root = {str(out.resolve())!r}" in config

    # the same command again: nothing folded twice, nothing lost
    again = course_folder(out, two, [old], log=lambda *_: None)
    assert again.folded == {} and again.marks == 0 and "already holds results" in again.skipped[0]
    assert _marked(out, "fx", "fx", "a_why", "alice") == (1.0, False, "Name the law.")

    # alice fixes nothing in fx but rewrites fy: regrading fy in the course folder keeps her fx mark
    # and a mark on fy, given before the resubmission
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        g = gb.find_grade("b_why", "fy", "fy", "alice")
        g.manual_score, g.needs_manual_grade = 1.0, False
        gb.db.commit()
    _submit(two, subs, "alice", "fy", {**FY, "triple": "def triple(x):\n    return x + x\n"})
    grade(two, subs, out, limits=LIMITS, assignments=["fy"], log=lambda *_: None)
    assert _marked(out, "fx", "fx", "a_why", "alice") == (1.0, False, "Name the law.")
    # her written answer did not change
    assert _marked(out, "fy", "fy", "b_why", "alice")[:2] == (1.0, False)
    assert _rows(out) == {
        ("alice", "fx"): ("4", "graded"),
        ("bob", "fx"): ("1", "needs_manual_grade"),
        # triple wrong: 0 + 1
        ("alice", "fy"): ("1", "graded"),
        ("bob", "fy"): ("0", "missing"),
    }
    assert _formgraders_view(out) == {"fx": ["alice", "bob"], "fy": ["alice"]}


def test_every_released_assignment_is_listed_before_it_is_graded(two, tmp_path, capsys):
    """A course folder made before any grading (`python -m autograde course-folder graded`) lists
    every assignment (with the course file's due date), so formgrader shows the whole term from its
    first week."""
    from nbgrader.api import Gradebook

    from autograde.__main__ import main

    term = tmp_path / "deadlines.toml"
    term.write_text("[assignments.fy]\ndue = 2026-12-14T23:59:00+01:00\n")
    out = tmp_path / "graded"
    assert main(["--root", str(two.root), "--deadlines", str(term), "course-folder", str(out)]) == 0
    assert (
        f"{out} serves 2 assignment(s) (fx, fy); 0 manual mark(s) copied" in capsys.readouterr().out
    )
    assert _formgraders_view(out) == {"fx": [], "fy": []}
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        assert gb.find_assignment("fy").duedate.isoformat() == "2026-12-14T22:59:00"
        assert gb.find_assignment("fx").duedate is None


def test_a_folder_that_is_not_an_output_folder_is_refused(two, tmp_path):
    (tmp_path / "notes").mkdir()
    with pytest.raises(ValueError, match="not an output folder"):
        course_folder(tmp_path / "graded", two, [tmp_path / "notes"], log=lambda *_: None)


def test_a_second_writer_is_refused(two, tmp_path):
    """Two runs writing one course folder at once (02 graded while 03 is): the second stops at once,
    naming the folder, and writes nothing; the first is not disturbed."""
    out, nothing = tmp_path / "graded", tmp_path / "submitted"
    nothing.mkdir()
    held, release = threading.Event(), threading.Event()

    def first():
        with hold(out):
            held.set()
            release.wait(30)

    t = threading.Thread(target=first)
    t.start()
    try:
        assert held.wait(30)
        with pytest.raises(RuntimeError, match="being written by another"):
            course_folder(out, two, log=lambda *_: None)
        with pytest.raises(RuntimeError, match="being written by another"):
            grade(two, nothing, out, limits=LIMITS, assignments=["fx"], log=lambda *_: None)
    finally:
        release.set()
        t.join()
    assert sorted(p.name for p in out.iterdir()) == [LOCK]
    (out / LOCK).unlink()  # a lock that is a link is not followed
    (out / LOCK).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(RuntimeError, match="is it a link"):
        course_folder(out, two, log=lambda *_: None)
    assert not (tmp_path / "elsewhere").exists()
