"""Issue 34, parts 2 and 3: feedback zips and grade CSVs that Canvas and Moodle take back as they
are.

The downloads are written here by hand in each platform's documented naming; ``lms-import`` reads
them (and keeps its record); the zips and CSVs built from a synthetic OUT are then read by
re-statements of the platforms' own matching code, written from their source, not from ours:
- Canvas re-upload: canvas-lms ``Assignment#infer_comment_context_from_filename`` (base name split
on ``_``, first
  two all-digit parts = user id, attachment id of that user's submission);
- Moodle feedback zip: ``assignfeedback_file_zip_importer::is_valid_filename_for_import`` (a path
part exploded on
  ``_`` into at most 5 pieces; piece 2 numeric participant id, pieces 3-4 a plugin);
- Canvas gradebook import: ``GradebookImporter#process_student`` (``ID`` as Canvas user id first,
then SIS User ID,
  then SIS Login ID, then name; a row whose first field matches /Points Possible/ is the maxima);
- Moodle grade import: the mapped column (ID number or e-mail) must name a user, else the import
stops. Cost: < 2 s in all (no grading runs).
"""

from __future__ import annotations

import csv
import json
import re
import zipfile
from pathlib import Path

import pytest

from autograde.feedback_zip import build, stage_release_feedback
from autograde.lms import export_grades, import_zip

A = "03_sampling"
ROSTER = (
    "id,first,last,email\n"
    "20230001,Ada,Lovelace,ada@uni.example\n"  # university ids: all digits
    "20230002,Grace,Hopper,grace@uni.example\n"
    "20230003,Ada,Lovelace,ada2@uni.example\n"
)  # a second Ada Lovelace
NB = json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()

# Canvas download: lastfirst[_LATE]_<user id>_<attachment id>_<file>; Canvas user ids are not
# university ids
CANVAS_USERS = {
    "1001": ("lovelaceada", "7001"),
    "1002": ("hoppergrace", "7002"),
    "1003": ("turingalan", "7003"),
}
CANVAS_ZIP = {
    "lovelaceada_1001_7001_03_sampling.ipynb": NB,
    "hoppergrace_LATE_1002_7002_03_sampling-1.ipynb": NB,
    "turingalan_1003_7003_03_sampling.ipynb": NB,
}  # not in the roster
MOODLE_USERS = {"4401": "Ada Lovelace", "4402": "Grace Hopper", "4403": "Alan_Turing"}
MOODLE_ZIP = {
    f"{name}_{pid}_assignsubmission_file_/03_sampling.ipynb": NB
    for pid, name in MOODLE_USERS.items()
}


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def _out(tmp_path: Path, students: dict[str, float], roster: bool = True) -> Path:
    """OUT as `grade` leaves it: details/, feedback pages, and (optionally) the roster."""
    out = tmp_path / "out"
    for student, score in students.items():
        p = out / "details" / student / f"{A}.json"
        p.parent.mkdir(parents=True)
        p.write_text(
            json.dumps(
                {
                    "student": student,
                    "assignment": A,
                    "score": score,
                    "max_score": 20.0,
                    "conditions": [],
                    "flags": [],
                    "notebooks": {},
                    "status": "graded",
                    "detail": "",
                }
            )
        )
        page = out / "feedback" / student / A / f"{A}.html"
        page.parent.mkdir(parents=True)
        page.write_text(f"<html>feedback for {student}</html>")
    if roster:
        (out / "roster.csv").write_text(ROSTER)
    return out


def canvas_match(basename: str) -> tuple[str, str] | None:
    """canvas-lms infer_comment_context_from_filename: (user id, attachment id) or None (file
    ignored)."""
    digits = [part for part in basename.split("_") if re.fullmatch(r"\d+", part)][:2]
    return (digits[0], digits[1]) if len(digits) == 2 else None


def moodle_match(path: str, participants: set[str]) -> tuple[str, str, str] | None:
    """Moodle is_valid_filename_for_import: (participant id, plugin, file name) or None (file
    ignored)."""
    parts = path.split("/")
    while parts:
        info = parts.pop(0).split("_", 4)
        if len(info) < 4 or not info[1].isdigit() or info[1] not in participants:
            continue
        plugin = f"{info[2]}_{info[3]}"
        if plugin not in ("assignfeedback_file", "assignsubmission_file"):
            continue
        return info[1], plugin, "/".join([info[4] if len(info) == 5 else ""] + parts).lstrip("/")
    return None


def moodle_match_31(path: str, participants: set[str]) -> tuple[str, str, str] | None:
    """Moodle 3.1-4.0: explode('_', filepath . filename, 5), at least five pieces; piece 5 is the
    file name."""
    info = ("/" + path).split("_", 4)
    if len(info) < 5 or not info[1].isdigit() or info[1] not in participants:
        return None
    plugin = f"{info[2]}_{info[3]}"
    return (
        (info[1], plugin, info[4].lstrip("/"))
        if plugin in ("assignfeedback_file", "assignsubmission_file")
        else None
    )


def test_canvas_feedback_zip_names_what_canvas_matches(tmp_path):
    subs = tmp_path / "submitted"
    import_zip(
        _zip(tmp_path / "c.zip", CANVAS_ZIP), subs, A, lms="canvas", roster=_roster(tmp_path)
    )
    # two roster rows are named Ada Lovelace: Canvas's Ada keeps her Canvas user id 1001 as folder
    # (lms-import)
    out = _out(tmp_path, {"1001": 18, "20230002": 12, "1003": 20, "20230003": 5})
    res = build(out, tmp_path / "fb.zip", "canvas", subs, A)
    with zipfile.ZipFile(tmp_path / "fb.zip") as zf:
        got = {canvas_match(n): zf.read(n).decode() for n in zf.namelist()}
    # each page reaches the Canvas user and attachment its student submitted with
    assert got == {
        ("1001", "7001"): "<html>feedback for 1001</html>",
        ("1002", "7002"): "<html>feedback for 20230002</html>",
        ("1003", "7003"): "<html>feedback for 1003</html>",
    }
    # graded, but not in this Canvas zip: listed, never guessed
    assert res.unnamed == ["20230003"]


def test_moodle_feedback_zip_names_what_moodle_matches(tmp_path):
    subs = tmp_path / "submitted"
    import_zip(
        _zip(tmp_path / "m.zip", MOODLE_ZIP), subs, A, lms="moodle", roster=_roster(tmp_path)
    )
    # two Ada Lovelaces: 4401 kept its LMS id
    out = _out(tmp_path, {"20230002": 12, "4401": 18, "4403": 3})
    build(out, tmp_path / "fb.zip", "moodle", subs, A)
    with zipfile.ZipFile(tmp_path / "fb.zip") as zf:
        got = {moodle_match(n, set(MOODLE_USERS)): zf.read(n).decode() for n in zf.namelist()}
        # older Moodle too
        assert {moodle_match_31(n, set(MOODLE_USERS)) for n in zf.namelist()} == set(got)
    assert got == {
        ("4402", "assignfeedback_file", f"{A}-feedback.html"): "<html>feedback for 20230002</html>",
        ("4401", "assignfeedback_file", f"{A}-feedback.html"): "<html>feedback for 4401</html>",
        ("4403", "assignfeedback_file", f"{A}-feedback.html"): "<html>feedback for 4403</html>",
    }


def test_feedback_zip_needs_the_import_record(tmp_path):
    out = _out(tmp_path, {"20230001": 1})
    with pytest.raises(ValueError, match="no lms-import record"):
        build(out, tmp_path / "fb.zip", "canvas", tmp_path / "nothing", A)


def _roster(tmp_path: Path) -> Path:
    p = tmp_path / "roster.csv"
    p.write_text(ROSTER)
    return p


def _read(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def canvas_rows(
    rows: list[list[str]], canvas_users: set[str], sis_ids: set[str]
) -> dict[str, tuple[str, str]]:
    """GradebookImporter#process_student on our 5 fixed columns: who each row grades, and with which
    key."""
    header, *body = rows
    assert header[:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    found = {}
    for row in body:
        if re.search("Points Possible", row[0]):
            continue
        if row[1] and row[1].isdigit() and row[1] in canvas_users:
            found[row[0] + "|" + row[5]] = ("canvas", row[1])
        elif row[2] in sis_ids:
            found[row[0] + "|" + row[5]] = ("sis", row[2])
        else:
            found[row[0] + "|" + row[5]] = ("name", row[0])
    return found


def test_canvas_csv_never_puts_a_university_id_in_canvas_id(tmp_path):
    """All-digit roster ids go to SIS User ID; ID holds only Canvas user ids that came from Canvas's
    own zip; duplicate names are told apart by id; a student the roster lacks is graded by the id
    Canvas gave."""
    subs = tmp_path / "submitted"
    import_zip(
        _zip(tmp_path / "c.zip", CANVAS_ZIP), subs, A, lms="canvas", roster=_roster(tmp_path)
    )
    out = _out(tmp_path, {"1001": 18, "20230002": 12.5, "1003": 20, "20230003": 5})
    said = []
    n = export_grades(
        out, tmp_path / "c.csv", "canvas", column="Sampling (55)", submissions=subs, log=said.append
    )
    rows = _read(tmp_path / "c.csv")
    assert n == 4 and rows[1][0] == "Points Possible" and rows[1][5] == "20"
    # Canvas's ID column is its internal user id: only 1001, 1002, 1003 exist there
    assert {r[1] for r in rows[2:]} <= set(CANVAS_USERS) | {""}
    assert canvas_rows(rows, set(CANVAS_USERS), {"20230001", "20230002", "20230003"}) == {
        # an Ada the roster cannot tell: her Canvas id
        "1001|18": ("canvas", "1001"),
        # not in the roster: the Canvas id from the zip
        "1003|20": ("canvas", "1003"),
        # the other Ada: no Canvas account in this zip
        "Lovelace, Ada|5": ("sis", "20230003"),
        "Hopper, Grace|12.5": ("canvas", "1002"),
    }
    assert [r[2] for r in rows[2:]] == ["", "", "20230002", "20230003"]  # sorted by student folder
    assert any("not in the roster" in s and "1003" in s for s in said)


def test_canvas_csv_without_import_record_uses_sis_ids_only(tmp_path):
    out = _out(tmp_path, {"20230001": 18, "20230003": 5})
    export_grades(out, tmp_path / "c.csv", "canvas", log=lambda *_: None)
    rows = _read(tmp_path / "c.csv")
    assert [(r[1], r[2]) for r in rows[2:]] == [("", "20230001"), ("", "20230003")]


def test_moodle_csv_maps_by_id_number_and_leaves_out_participant_ids(tmp_path):
    """Moodle participant ids (a folder named by one: no roster row) are per assignment and no user
    field Moodle maps; one unmapped row stops Moodle's whole import, so such rows are left out and
    listed."""
    subs = tmp_path / "submitted"
    import_zip(
        _zip(tmp_path / "m.zip", MOODLE_ZIP), subs, A, lms="moodle", roster=_roster(tmp_path)
    )
    out = _out(tmp_path, {"20230002": 12, "4401": 18, "4403": 3, "20230003": 7})
    said = []
    n = export_grades(out, tmp_path / "m.csv", "moodle", submissions=subs, log=said.append)
    with open(tmp_path / "m.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    roster_ids = {"20230001", "20230002", "20230003"}
    assert n == 2 and {r["ID number"] for r in rows} <= roster_ids
    assert [(r["ID number"], r["Email address"], r[A]) for r in rows] == [
        ("20230002", "grace@uni.example", "12"),
        ("20230003", "ada2@uni.example", "7"),
    ]
    assert any("left out" in s and "4401" in s and "4403" in s for s in said)


def test_release_feedback_stages_what_nbgrader_hashes(tmp_path):
    """nbgrader's own ExchangeReleaseFeedback publishes a page under the name a student's
    fetch_feedback computes from their submission's secret (notebook_hash(secret, notebook id))."""
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback
    from nbgrader.utils import notebook_hash
    from traitlets.config import Config

    out = _out(tmp_path, {"alice": 10, "bob": 9}, roster=False)
    subs = tmp_path / "submitted"
    (subs / "alice" / A).mkdir(parents=True)
    (subs / "alice" / A / "timestamp.txt").write_text("2026-12-01 10:00:00.000000 UTC")
    (subs / "alice" / A / "submission_secret.txt").write_text("s3cret-alice")
    staged, without = stage_release_feedback(out, subs, A)
    assert (staged, without) == (["alice"], ["bob"])
    c = Config()
    c.CourseDirectory.root = str(out)
    c.CourseDirectory.course_id = "llms"
    c.CourseDirectory.assignment_id = A
    c.CourseDirectory.student_id = "alice"
    (tmp_path / "exchange").mkdir()
    c.Exchange.root = str(tmp_path / "exchange")
    coursedir = CourseDirectory(config=c)
    ExchangeReleaseFeedback(coursedir=coursedir, config=c).start()
    page = (
        tmp_path
        / "exchange"
        / "llms"
        / "feedback"
        / f"{notebook_hash(secret='s3cret-alice', notebook_id=A)}.html"
    )
    assert page.read_text() == "<html>feedback for alice</html>"


def test_command_line_feedback_zip(tmp_path, capsys):
    from autograde.__main__ import main

    subs = tmp_path / "submitted"
    assert (
        main(
            [
                "lms-import",
                str(_zip(tmp_path / "m.zip", MOODLE_ZIP)),
                "--assignment",
                A,
                "--to",
                str(subs),
                "--lms",
                "moodle",
            ]
        )
        == 0
    )
    out = _out(tmp_path, {"4402": 12, "s9": 1}, roster=False)
    assert (
        main(
            [
                "lms-feedback",
                str(out),
                str(tmp_path / "fb.zip"),
                "--lms",
                "moodle",
                "--submissions",
                str(subs),
                "--assignment",
                A,
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "wrote 1 feedback page(s)" in printed and "no feedback file for them): s9" in printed
    with zipfile.ZipFile(tmp_path / "fb.zip") as zf:
        assert [moodle_match(n, set(MOODLE_USERS))[0] for n in zf.namelist()] == ["4402"]


def test_moodle_41_download_without_the_trailing_underscore(tmp_path):
    """Moodle >= 4.1 names a participant's folder ``Full Name_<id>_assignsubmission_file`` (no last
    "_"), as its own feedback importer's comment says; lms-import reads it (before, every such
    member was skipped)."""
    z = _zip(
        tmp_path / "m41.zip",
        {
            f"Grace Hopper_4402_assignsubmission_file/{A}.ipynb": NB,
            "Alan Turing_4403_assignsubmission_onlinetext/onlinetext.html": b"<p>x</p>",
        },
    )
    res = import_zip(z, tmp_path / "submitted", A, lms="moodle", roster=_roster(tmp_path))
    assert (
        res.placed == {"20230002": f"Grace Hopper_4402_assignsubmission_file/{A}.ipynb"}
        and res.skipped == []
    )


def test_canvas_csv_login_column_from_the_roster(tmp_path):
    """A roster with a ``login`` column fills SIS Login ID (Canvas's third key), quoted where it
    starts a formula."""
    roster = tmp_path / "r.csv"
    roster.write_text(
        "id,first,last,email,login\n20230001,Ada,Lovelace,a@x,alove\n20230002,Grace,Hopper,g@x,=cmd\n"
    )
    out = _out(tmp_path, {"20230001": 18, "20230002": 3}, roster=False)
    export_grades(out, tmp_path / "c.csv", "canvas", roster=roster, log=lambda *_: None)
    assert [(r[2], r[3]) for r in _read(tmp_path / "c.csv")[2:]] == [
        ("20230001", "alove"),
        ("20230002", "'=cmd"),
    ]


def test_zip_member_names_hold_no_path_or_control_characters():
    """Only the ids are matched: the display name (the student's text) is reduced to letters and
    digits."""
    from autograde.feedback_zip import canvas_name, moodle_name

    assert (
        canvas_name("..\\evil\x1b$_LATE_1001_7001_a.ipynb", A)
        == f"evil_LATE_1001_7001_feedback-{A}.html"
    )
    # an Arabic-Indic 3 is no Canvas id
    assert canvas_name("x_\u0663_7001_a.ipynb", A) is None
    assert (
        moodle_name("../../José_O'Neil", "4401", A)
        == f"José ONeil_4401_assignfeedback_file_/{A}-feedback.html"
    )
