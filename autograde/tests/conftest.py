"""Shared fixtures: the tiny "fx" course (released once per session) and helpers to make
submissions."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from autograde.course import REPO, Course
from autograde.tests.fixture import ASSIGNMENT, make_course

# Marks the processes this test run starts on purpose (sleepers that must not outlive a grading): a
# test looks for its own mark, so another user's test or grading run on the same machine never
# decides its verdict.
RUN_MARK = f"run{os.getpid()}"
# Entries of the temporary folder that the grader or pytest make, one per user: a test compares
# their owners before and after its own run, and never judges entries other users made.
TEMP_PREFIXES = ("pytest-of", "autograde-slots", "autograde-sockets")


def temp_owners(base: Path) -> dict[str, int]:
    """uid of ``base`` itself (key ".") and of each entry of it named with a TEMP_PREFIXES
    prefix."""
    owners = {".": base.stat().st_uid}
    owners.update(
        {p.name: p.lstat().st_uid for p in base.iterdir() if p.name.startswith(TEMP_PREFIXES)}
    )
    return owners


def handed_over(before: dict[str, int], after: dict[str, int], me: int) -> list[str]:
    """Entries a run gave to another user: one whose owner changed, or a new one neither this user's
    nor named after its owner (the grader makes `autograde-slots-<uid>` for each user who grades, by
    design); a sandbox uid owns nothing outside its sandbox, whatever the name."""
    from autograde.grade import SLOTS
    from autograde.sandbox import FIRST_UID

    sandbox = range(FIRST_UID, FIRST_UID + SLOTS)
    return sorted(
        name
        for name, uid in after.items()
        if uid != before.get(name, me)
        and (name in before or not name.endswith(f"-{uid}") or uid in sandbox)
    )


def fixture_course(root: Path, cell_timeout: int = 10) -> Course:
    """The Course object for a fixture course written by make_course(root)."""
    return Course(
        root=root,
        visible_package="fx_checks",
        hidden_package="fx_hidden",
        references_dir=root / "pylib" / "fx_hidden" / "references",
        bugzoo_dir=root / "bugzoo",
        pythonpath=(root / "pylib",),
        cell_timeout=cell_timeout,
    )


@pytest.fixture(scope="session")
def fx_course(tmp_path_factory) -> Course:
    """The fixture course, released (notebooks/ + references written). ~8 s."""
    from autograde.release import release

    root = make_course(tmp_path_factory.mktemp("fxcourse"))
    course = fixture_course(root)
    release(course, log=lambda *_: None)
    return course


def student_notebook(course: Course, answers: dict[str, str] | None = None) -> dict:
    """The released fx notebook as JSON, with answer cells (by grade_id) replaced."""
    nb = json.loads(course.release_notebook(ASSIGNMENT, ASSIGNMENT).read_text())
    for cell in nb["cells"]:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if answers and gid in answers:
            cell["source"] = answers[gid]
    return nb


def submit(folder: Path, student: str, nb: dict | bytes | str) -> Path:
    """Write a submission in nbgrader's layout: folder/<student>/fx/fx.ipynb."""
    path = folder / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(nb, dict):
        path.write_text(json.dumps(nb, indent=1))
    elif isinstance(nb, str):
        path.write_text(nb)
    else:
        path.write_bytes(nb)
    return path


def digest(folder: Path) -> dict[str, str]:
    """sha256 of every file under folder, by relative path (to prove that grading changed no
    submission)."""
    import hashlib

    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


REAL_ASSIGNMENTS = Course().assignments() if (REPO / "solutions").is_dir() else []


def grade_on_command_line(tmp_path: Path, *options: str):
    """`python -m autograde grade` (plus options) on two submissions of the first real assignment
    that need no kernel: one missing, one broken. Returns (the finished process, grades.csv rows by
    student)."""
    import csv
    import subprocess
    import sys

    a = REAL_ASSIGNMENTS[0]
    subs = tmp_path / "submitted"
    (subs / "nobody" / a).mkdir(parents=True)
    (subs / "broken" / a).mkdir(parents=True)
    (subs / "broken" / a / f"{a}.ipynb").write_text('{"cells": [')
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograde",
            "grade",
            str(subs),
            "--out",
            str(tmp_path / "out"),
            "--assignment",
            a,
            *options,
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    with open(tmp_path / "out" / "grades.csv") as f:
        return res, {r["student"]: r for r in csv.DictReader(f)}
