"""LMS bulk downloads in, grade CSVs out, against the platforms' documented file names and columns.

Downloads are built here with the naming each platform documents (Canvas: ``lastfirst[_LATE]_userid_
submissionid_filename``, flat; Moodle: ``Full Name_participantid_assignsubmission_file_/filename``);
the expected placement of each file is written out by hand. Exports are read back with the csv
module and compared with the columns Canvas's gradebook import and Moodle's CSV grade import
document. Cost: < 2 s.
"""

from __future__ import annotations

import csv
import json
import zipfile
from pathlib import Path

import pytest

from autograde.lms import export_grades, import_zip, parse_member

A = "02_logits_softmax"
ROSTER = (
    "id,first,last,email\n"
    "s1,Ada,Lovelace,ada@example.org\n"
    "s2,Grace,Hopper,grace@example.org\n"
    "1004,Charles,Babbage,cb@example.org\n"
    "s5,José,Núñez,jn@example.org\n"
)


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def _nb(tag: str) -> bytes:
    return json.dumps(
        {"cells": [], "metadata": {"tag": tag}, "nbformat": 4, "nbformat_minor": 5}
    ).encode()


CANVAS = {
    f"lovelaceada_1001_5551_{A}.ipynb": _nb("ada"),
    f"hoppergrace_LATE_1002_5552_{A}-1.ipynb": _nb("grace"),  # late, re-uploaded (-1)
    "hoppergrace_LATE_1002_5553_notes.pdf": b"%PDF",  # not a notebook
    "babbagecharles_1004_5554_my attempt.ipynb": _nb("charles"),  # the only notebook, another name
    "noetheremmy_1005_5555_a.ipynb": _nb("e1"),  # two candidates: skipped
    "noetheremmy_1005_5556_b.ipynb": _nb("e2"),
    "../../evil_1_2_x.ipynb": _nb("evil"),  # a path, not a Canvas name
}
MOODLE = {
    f"Ada Lovelace_2001_assignsubmission_file_/{A}.ipynb": _nb("ada"),
    f"Grace Hopper_2002_assignsubmission_file_{A}.ipynb": _nb("grace"),  # older flat layout
    "Alan Turing_2003_assignsubmission_onlinetext_/onlinetext.html": b"<p>hi</p>",
    f"José Núñez_2004_assignsubmission_file_/work/{A}.ipynb": _nb("jose"),
}


def _tag(p: Path) -> str:
    return json.loads(p.read_text())["metadata"]["tag"]


def test_canvas_names_parse():
    e = parse_member(f"hoppergrace_LATE_1002_5552_{A}-1.ipynb")
    assert (e.lms, e.lms_id, e.name, e.file, e.late) == (
        "canvas",
        "1002",
        "hoppergrace",
        f"{A}-1.ipynb",
        True,
    )
    e = parse_member("Ada Lovelace_2001_assignsubmission_file_/x/y.ipynb")
    assert (e.lms, e.lms_id, e.name, e.file) == ("moodle", "2001", "Ada Lovelace", "y.ipynb")
    assert parse_member("Alan Turing_2003_assignsubmission_onlinetext_/onlinetext.html") is None
    assert parse_member("readme.txt") is None


def test_canvas_import_by_lms_id(tmp_path):
    subs = tmp_path / "submitted"
    res = import_zip(_zip(tmp_path / "c.zip", CANVAS), subs, A, lms="canvas")
    assert sorted(res.placed) == ["1001", "1002", "1004"]
    assert {p.parent.parent.name: _tag(p) for p in subs.glob(f"*/{A}/{A}.ipynb")} == {
        "1001": "ada",
        "1002": "grace",
        "1004": "charles",
    }
    assert res.late == ["1002"]
    skipped = dict(res.skipped)
    assert "2 candidate notebooks" in skipped["noetheremmy_1005_5555_a.ipynb"]
    assert "../../evil_1_2_x.ipynb" in skipped and not (tmp_path.parent / "evil").exists()
    assert sorted(p.relative_to(subs).as_posix() for p in subs.rglob("*") if p.is_file()) == [
        f".lms/{A}.json"
    ] + [f"{s}/{A}/{A}.ipynb" for s in ("1001", "1002", "1004")]  # + the import record


def test_canvas_import_with_roster_is_idempotent(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    subs = tmp_path / "submitted"
    z = _zip(tmp_path / "c.zip", CANVAS)
    res = import_zip(z, subs, A, roster=roster)
    assert {s: _tag(subs / s / A / f"{A}.ipynb") for s in res.placed} == {
        "s1": "ada",
        "s2": "grace",
        "1004": "charles",
    }
    assert len(res.unmatched) == 1 and res.unmatched[0].startswith(
        "noetheremmy (canvas id 1005): no roster row"
    )
    mtimes = {p: p.stat().st_mtime_ns for p in subs.rglob("*.ipynb")}
    import_zip(z, subs, A, roster=roster)
    assert {p: p.stat().st_mtime_ns for p in subs.rglob("*.ipynb")} == mtimes  # nothing rewritten


def test_moodle_import(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    subs = tmp_path / "submitted"
    res = import_zip(_zip(tmp_path / "m.zip", MOODLE), subs, A, lms="moodle", roster=roster)
    assert {s: _tag(subs / s / A / f"{A}.ipynb") for s in res.placed} == {
        "s1": "ada",
        "s2": "grace",
        "s5": "jose",
    }
    assert res.skipped == [] and res.unmatched == []
    res = import_zip(_zip(tmp_path / "m.zip", MOODLE), tmp_path / "plain", A)
    assert sorted(res.placed) == ["2001", "2002", "2004"]


def _graded_out(tmp_path: Path) -> Path:
    """OUT with three graded records as `grade` writes them in details/ (one still waits for manual
    marks)."""
    out = tmp_path / "out"
    recs = [
        ("1001", 25.5, []),
        ("s2", 20.0, [["needs_manual_grade", "'q' is graded by hand"]]),
        ("s1", 26.0, []),
    ]
    for student, score, conds in recs:
        p = out / "details" / student / f"{A}.json"
        p.parent.mkdir(parents=True)
        p.write_text(
            json.dumps(
                {
                    "student": student,
                    "assignment": A,
                    "score": score,
                    "max_score": 26.0,
                    "conditions": conds,
                    "flags": [],
                    "notebooks": {},
                    "status": conds[0][0] if conds else "graded",
                    "detail": "",
                }
            )
        )
    (out / "roster.csv").write_text(
        ROSTER.replace("1004,Charles,Babbage", "1001,Charles,Babbage"), encoding="utf-8"
    )
    return out


def test_canvas_export(tmp_path):
    out = _graded_out(tmp_path)
    dest = tmp_path / "canvas.csv"
    assert export_grades(out, dest, "canvas", column="Softmax (4321)", log=lambda *_: None) == 3
    with open(dest, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    # Canvas's gradebook import: Student, ID, SIS User ID, SIS Login ID, Section, then assignment
    # columns
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Softmax (4321)"]
    # no import record: an all-digit roster id is a university id, never Canvas's internal ID (issue
    # 34)
    assert rows[1] == ["Points Possible", "", "", "", "", "26"]
    assert rows[2:] == [
        ["Babbage, Charles", "", "1001", "", "", "25.5"],
        ["Lovelace, Ada", "", "s1", "", "", "26"],
        ["Hopper, Grace", "", "s2", "", "", ""],
    ]  # manual marks pending: blank


def test_moodle_export(tmp_path):
    out = _graded_out(tmp_path)
    dest = tmp_path / "moodle.csv"
    said = []
    export_grades(out, dest, "moodle", log=said.append)
    with open(dest, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    # Moodle's CSV grade import maps a user column (email address or ID number) and a grade column
    assert [(r["Email address"], r["ID number"], r[A]) for r in rows] == [
        ("cb@example.org", "1001", "25.5"),
        ("ada@example.org", "s1", "26"),
        ("grace@example.org", "s2", ""),
    ]
    assert rows[1]["First name"] == "Ada" and rows[1]["Last name"] == "Lovelace"
    assert any("s2 (needs_manual_grade)" in s for s in said)


def test_export_needs_one_assignment(tmp_path):
    out = _graded_out(tmp_path)
    with pytest.raises(ValueError, match="no grades for"):
        export_grades(out, tmp_path / "x.csv", "canvas", assignment="99_nope")


def test_command_line(tmp_path, capsys):
    from autograde.__main__ import main

    z = _zip(tmp_path / "m.zip", MOODLE)
    assert main(["lms-import", str(z), "--assignment", A, "--to", str(tmp_path / "submitted")]) == 0
    assert sorted(p.name for p in (tmp_path / "submitted").iterdir()) == [
        ".lms",
        "2001",
        "2002",
        "2004",
    ]
    out = _graded_out(tmp_path)
    assert main(["lms-export", str(out), "--lms", "canvas", "--to", str(tmp_path / "c.csv")]) == 0
    assert (tmp_path / "c.csv").read_text().splitlines()[0].endswith(f",{A}")
    assert "imported 3 submission(s)" in capsys.readouterr().out


def test_name_collision_keeps_both_canvas(tmp_path):
    """Issue 37: an account renamed to a classmate's name made both entries skipped, and the
    classmate had no row. Both are kept, each under its Canvas user id, and the collision is named;
    a roster row that names the classmate by the LMS id keeps that folder (Babbage is roster id
    1004)."""
    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    z = _zip(
        tmp_path / "c.zip",
        {
            f"lovelaceada_1001_5551_{A}.ipynb": _nb("ada"),
            f"lovelaceada_1009_5559_{A}.ipynb": _nb("mallory"),  # renamed to Ada
            f"babbagecharles_1004_5554_{A}.ipynb": _nb("charles"),
            f"babbagecharles_1010_5560_{A}.ipynb": _nb("eve"),
        },
    )  # renamed to Charles
    subs = tmp_path / "submitted"
    res = import_zip(z, subs, A, roster=roster)
    assert res.skipped == []
    assert {s: _tag(subs / s / A / f"{A}.ipynb") for s in res.placed} == {
        "1001": "ada",
        "1009": "mallory",
        "1004": "charles",
        "1010": "eve",
    }
    assert [(c.student, [a[3] for a in c.accounts]) for c in res.collisions] == [
        ("1004", ["1004", "1010"]),
        ("s1", ["1001", "1009"]),
    ]
    assert (
        res.collisions[1]
        .line()
        .startswith("name_collision: 2 LMS accounts match roster student s1 by name")
    )


def test_name_collision_keeps_both_moodle(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    z = _zip(
        tmp_path / "m.zip",
        {
            f"Ada Lovelace_2001_assignsubmission_file_/{A}.ipynb": _nb("ada"),
            f"ada lovelace_2009_assignsubmission_file_/{A}.ipynb": _nb("mallory"),
            f"Grace Hopper_2002_assignsubmission_file_/{A}.ipynb": _nb("grace"),
        },
    )
    subs = tmp_path / "submitted"
    res = import_zip(z, subs, A, lms="moodle", roster=roster)
    assert res.skipped == []
    assert {s: _tag(subs / s / A / f"{A}.ipynb") for s in res.placed} == {
        "2001": "ada",
        "2009": "mallory",
        "s2": "grace",
    }
    assert [(c.student, c.accounts) for c in res.collisions] == [
        (
            "s1",
            [
                ("moodle", "2001", "Ada Lovelace", "2001"),
                ("moodle", "2009", "ada lovelace", "2009"),
            ],
        )
    ]


def test_command_line_names_the_collision_and_escapes_names(tmp_path, capsys):
    from autograde.__main__ import main

    roster = tmp_path / "roster.csv"
    roster.write_text(ROSTER, encoding="utf-8")
    z = _zip(
        tmp_path / "c.zip",
        {
            f"lovelaceada_1001_5551_{A}.ipynb": _nb("ada"),
            "lovelaceada_1009_5559_\x1b[2J\x1b]0;pwned\x07.ipynb": _nb("mallory"),
        },
    )
    assert (
        main(
            [
                "lms-import",
                str(z),
                "--assignment",
                A,
                "--to",
                str(tmp_path / "s"),
                "--roster",
                str(roster),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert (
        "name_collision: 2 LMS accounts match roster student s1" in out
        and "imported 2 submission(s)" in out
    )
    assert "\x1b" not in out and "\x07" not in out and "\\x1b[2J" in out


def test_export_log_escapes_folder_names(tmp_path):
    """A row's student id is its folder's name; the lines lms-export prints show control characters
    escaped."""
    out = _graded_out(tmp_path)
    p = out / "details" / "x\x1b[2J" / f"{A}.json"
    p.parent.mkdir(parents=True)
    p.write_text(
        json.dumps(
            {
                "student": "x\x1b[2J",
                "assignment": A,
                "score": 0.0,
                "max_score": 26.0,
                "conditions": [["error", "boom"]],
                "flags": [],
                "notebooks": {},
                "status": "error",
                "detail": "boom",
            }
        )
    )
    said = []
    export_grades(out, tmp_path / "c.csv", "canvas", log=said.append)
    assert any("x\\x1b[2J (error)" in s for s in said) and not any("\x1b" in s for s in said), said
