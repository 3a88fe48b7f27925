"""The adversarial catalog (issue 4): submissions that attack the grader, graded as one class with honest ones.

Every attack from the issue, each written as a student would: the answers themselves are wrong (`return 0`),
and the rest of the cell tries to make them pass anyway, to read what it must not, or to hurt the grader or a
classmate. For each one: grading of the whole class completes; the attacker scores no more than an untouched
notebook; every honest student's row is exactly what it is in a run without the attackers; no submitted file
changes; no process outlives the run. The attackers know the layout (the course root, the output folder, a
classmate's submission path), as a student who read the harness's source would.

Needs root and bubblewrap (the sandbox); ~3 min on 2 cores (about 20 students, two grading runs).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from autograde import sandbox
from autograde.grade import Limits, grade
from autograde.tests.attacks import WRONG_SQUARE, answer, attacks
from autograde.tests.conftest import digest, student_notebook, submit

pytestmark = pytest.mark.skipif(sandbox.unavailable() is not None,
                                reason=f"sandbox unavailable here: {sandbox.unavailable()}")

LIMITS = Limits(wall_s=150, memory_bytes=2 << 30)
HONEST = {
    "correct": {"double": "def double(x):\n    return x * 2\n", "square": "def square(x):\n    return x ** 2\n",
                "a_why": "2x = x + x."},
    "partial": {"double": "def double(x):\n    return 2 * float(x)\n", "square": "def square(x):\n    return x * x\n"},
    "untouched": {},
}
def _rows(path: Path) -> dict[str, dict]:
    with open(path) as f:
        return {r["student"]: r for r in csv.DictReader(f)}


@pytest.fixture(scope="module")
def graded(fx_course, tmp_path_factory):
    honest_only = tmp_path_factory.mktemp("honest")
    whole_class = tmp_path_factory.mktemp("class")
    for folder in (honest_only, whole_class):
        for student, answers in HONEST.items():
            submit(folder, student, student_notebook(fx_course, answers))
    out_honest = tmp_path_factory.mktemp("out_honest")
    out = tmp_path_factory.mktemp("out_class")
    catalog = attacks(fx_course.root, whole_class / "correct" / "fx" / "fx.ipynb", out)
    for name, attack in catalog.items():
        submit(whole_class, name, student_notebook(fx_course, {"double": answer(attack), "square": WRONG_SQUARE}))
    before = digest(whole_class)
    grade(fx_course, honest_only, out_honest, workers=2, limits=LIMITS, log=lambda *_: None)
    grade(fx_course, whole_class, out, workers=2, limits=LIMITS, log=lambda *_: None)
    return {"honest": _rows(out_honest / "grades.csv"), "class": _rows(out / "grades.csv"), "out": out,
            "folder": whole_class, "before": before, "attacks": sorted(catalog)}


def test_the_whole_class_is_graded(graded):
    assert set(graded["class"]) == set(HONEST) | set(graded["attacks"])


def test_honest_students_get_exactly_what_they_get_without_the_attackers(graded):
    assert float(graded["honest"]["correct"]["score"]) == 3  # the comparison below is not between zeros
    for student in HONEST:
        assert graded["class"][student] == graded["honest"][student], student


@pytest.mark.parametrize("attack", sorted(attacks(Path("/r"), Path("/c"), Path("/o"))))
def test_an_attacker_scores_no_more_than_an_untouched_notebook(graded, attack):
    row, untouched = graded["class"][attack], graded["class"]["untouched"]
    assert float(row["score"]) <= float(untouched["score"]), row


def test_attacks_that_fooled_the_kernel_are_flagged(graded):
    """Patching the tests in the kernel passes there; the verification outside the kernel disagrees."""
    for attack in ["patch_check_engine", "input_transformer", "sys_modules"]:
        row = graded["class"][attack]
        assert row["status"] == "flagged" and "outside it" in row["detail"], row


def test_no_submitted_file_changed(graded):
    assert digest(graded["folder"]) == graded["before"]


def test_no_process_outlives_the_run(graded):
    import psutil
    marks = ("999.75", "999.5")
    left = [p.pid for p in psutil.process_iter(["cmdline"]) if any(m in " ".join(p.info["cmdline"] or []) for m in marks)]
    assert left == []


def test_the_kernel_saw_no_secrets(graded):
    """What read_secrets printed (its own cell's output) holds no solution and no classmate's notebook."""
    nb = json.loads((graded["out"] / "autograded" / "read_secrets" / "fx" / "fx.ipynb").read_text())
    answer = next(c for c in nb["cells"] if "targets = " in "".join(c.get("source", "")))
    printed = "".join(o.get("text", "") if isinstance(o.get("text", ""), str) else "".join(o["text"])
                      for o in answer.get("outputs", []))
    assert "searched 5 places" in printed  # the attack ran to its end
    assert "BEGIN SOLUTION" not in printed and "BEGIN HIDDEN TESTS" not in printed
    assert "return x * 2" not in printed  # the classmate's answer
    assert "Multiplication distributes" not in printed  # the instructor's written answer


def test_huge_output_is_cut(graded):
    path = graded["out"] / "autograded" / "huge_output" / "fx" / "fx.ipynb"
    assert path.stat().st_size < 5 << 20
