"""Issue 34, part 4: the class report from a synthetic OUT (details/ as `grade` writes them, a
gradebook.db holding one manual mark as formgrader stores it). Expected numbers are counted by hand
from the records below. Cost: one gradebook (2-10 s: nbgrader creates its schema; load-dependent), a
plot per report.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import re
import warnings
from pathlib import Path

import pytest

from autograde.report import write_report
from autograde.spreadsheet import uncell

A, NB = "03_sampling", "03_sampling"
EVIL = "<img src=x onerror=alert(1)>"


def _test(gid, points, maxp, result, error=None):
    t = {
        "grade_id": gid,
        "points": points,
        "max_points": maxp,
        "title": f"checks {gid}",
        "result": result,
    }
    if error:
        t["error"] = error
    return t


# student -> tests; "temp" is worth 4, "topk" 6, "why" (a written answer, graded by hand) 5
CLASS = {
    "s1": [
        _test("temp", 4, 4, "passed"),
        _test("topk", 6, 6, "passed"),
        _test("why", 0, 5, "needs_manual_grade"),
    ],
    "s2": [
        _test("temp", 0, 4, "failed", "AssertionError: temperature 0.5: got 0.31, expected 0.25"),
        _test("topk", 6, 6, "passed"),
        _test("why", 0, 5, "needs_manual_grade"),
    ],
    "s3": [
        _test("temp", 0, 4, "failed", "AssertionError: temperature 2: got 0.12, expected 0.2"),
        _test("topk", 0, 6, "failed", "AssertionError: top_k=1 must keep exactly one token"),
        _test("why", 0, 5, "needs_manual_grade"),
    ],
    EVIL: [
        _test("temp", 0, 4, "failed", f"ValueError: {EVIL}"),
        _test("topk", 3, 6, "failed", "partial: 3 of 6"),
        _test("why", 0, 5, "needs_manual_grade"),
    ],
}


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    """Built once: nbgrader's gradebook schema costs seconds on a busy machine; the report only
    reads OUT."""
    from nbgrader.api import Gradebook

    out = tmp_path_factory.mktemp("report") / "out"
    for student, tests in CLASS.items():
        p = out / "details" / student / f"{A}.json"
        p.parent.mkdir(parents=True)
        p.write_text(
            json.dumps(
                {
                    "student": student,
                    "assignment": A,
                    "score": sum(t["points"] for t in tests),
                    "max_score": 15.0,
                    "status": "needs_manual_grade",
                    "conditions": [],
                    "flags": [],
                    "detail": "",
                    "notebooks": {NB: {"tests": tests, "errors_outside_tests": []}},
                }
            )
        )
    # a lone "missing" record: counted as a student row, never in a distribution
    p = out / "details" / "s9" / f"{A}.json"
    p.parent.mkdir(parents=True)
    p.write_text(
        json.dumps(
            {
                "student": "s9",
                "assignment": A,
                "score": 0.0,
                "max_score": 15.0,
                "status": "missing",
                "conditions": [],
                "flags": [],
                "detail": "",
                "notebooks": {},
            }
        )
    )
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        # nbgrader's add_submission trips SQLAlchemy autoflush warnings
        warnings.simplefilter("ignore")
        gb.add_assignment(A)
        gb.add_notebook(NB, A)
        gb.add_grade_cell("temp", NB, A, max_score=4, cell_type="code")
        gb.add_grade_cell("topk", NB, A, max_score=6, cell_type="code")
        gb.add_grade_cell("why", NB, A, max_score=5, cell_type="markdown")
        for student, tests in CLASS.items():
            gb.add_student(student)
            gb.add_submission(A, student)
            for t in tests:
                g = gb.find_grade(t["grade_id"], NB, A, student)
                g.auto_score = t["points"] if t["grade_id"] != "why" else None
                g.needs_manual_grade = t["grade_id"] == "why"
            gb.db.commit()
        # the instructor marked three of four
        for student, mark in (("s1", 5.0), ("s2", 2.0), ("s3", 0.0)):
            g = gb.find_grade("why", NB, A, student)
            g.manual_score = mark
            g.needs_manual_grade = False
        gb.db.commit()
    return out


def _csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return [{k: uncell(v) for k, v in r.items()} for r in csv.DictReader(f)]


def test_report_distributions_failures_and_students(out, tmp_path):
    write_report(out, tmp_path / "rep")
    ex = {r["grade_id"]: r for r in _csv(tmp_path / "rep" / "exercises.csv")}
    # temp: 4, 0, 0, 0 -> mean 1, one full, three zero; topk: 6, 6, 0, 3; why (by hand): 5, 2, 0 and
    # one pending
    assert [ex["temp"][k] for k in ("students", "mean", "median", "full", "partial", "zero")] == [
        "4",
        "1",
        "0",
        "1",
        "0",
        "3",
    ]
    assert [ex["topk"][k] for k in ("mean", "median", "full", "partial", "zero")] == [
        "3.75",
        "4.5",
        "2",
        "1",
        "1",
    ]
    assert [
        ex["why"][k] for k in ("students", "mean", "full", "partial", "zero", "to_grade_by_hand")
    ] == ["3", "2.333", "1", "1", "1", "1"]
    fails = [r for r in _csv(tmp_path / "rep" / "failures.csv") if r["grade_id"] == "temp"]
    # the two "got x, expected y" messages are one misconception (numbers folded), listed first
    assert [(r["students_failing"], r["message"]) for r in fails] == [
        ("2", "AssertionError: temperature #: got #, expected #"),
        ("1", "ValueError: <img src=x onerror=alert(#)>"),
    ]
    assert fails[0]["share"] == "50%" and fails[0]["example"].startswith(
        "AssertionError: temperature "
    )
    students = {r["student"]: r for r in _csv(tmp_path / "rep" / "students.csv")}
    # 0 + 6 + the manual 2
    assert students["s1"]["score"] == "15" and students["s2"]["score"] == "8"
    assert students[EVIL][f"{NB}/why"] == "(by hand)" and students["s9"]["status"] == "missing"


def test_report_page_escapes_student_strings_and_embeds_plots(out, tmp_path):
    write_report(out, tmp_path / "rep")
    page = (tmp_path / "rep" / "report.html").read_text()
    assert EVIL not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    images = re.findall(r"src='data:image/png;base64,([A-Za-z0-9+/=]+)'", page)
    assert len(images) == 1 and base64.b64decode(images[0])[:8] == b"\x89PNG\r\n\x1a\n"
    assert "src='http" not in page and "<script" not in page


def test_report_command_line(out, tmp_path, capsys):
    from autograde.__main__ import main

    assert main(["report", str(out), str(tmp_path / "rep")]) == 0
    assert "report.html" in capsys.readouterr().out
    assert (
        io.StringIO((tmp_path / "rep" / "exercises.csv").read_text())
        .readline()
        .startswith("assignment,")
    )
