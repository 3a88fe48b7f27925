"""Canvas submission times given to ``lms-import --times`` (issue 34): the REST API's Submission
objects as saved, or a CSV, matched to the zip's students by id, each id in its own space.

Truth: Canvas's documented names (file names ``lastfirst[_LATE]_userid_submissionid_file``; the
Submission object's ``user_id``, ``submitted_at`` and, with ``include[]=user``, ``user.sis_user_id``
and ``user.login_id``), times and lateness worked by hand against the course file below (due
2026-12-14 22:59 UTC, 10 % a started day, 15 min grace). Numeric ids on purpose: the roster's
university ids and Canvas's user ids are both numbers. Cost: < 2 s.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from autograde import deadlines
from autograde.canvas_times import MAX_BYTES, read_times
from autograde.deadlines import assess, submission_time
from autograde.lms import import_zip

A = "fx"
COURSE_FILE = (
    '[late_policy]\nmethod = "percent"\npercent = 10\nper = "day"\ncap = 50\ngrace_minutes = 15\n\n'
    "[assignments.fx]\ndue = 2026-12-14T23:59:00+01:00\n"
)
ROSTER = (
    "id,first,last,email\n2001,Ada,Lovelace,ada@example.org\n2002,Grace,Hopper,gh@example.org\n"
)
# Canvas users: 1001 Ada (roster id 2001), 1002 Grace (2002), 3003 Charles and 1005 Emmy (not in the
# roster: their folders are named by their Canvas user ids)
NB = json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


def _setup(tmp_path: Path, times_text: str, name: str = "times.json", roster: bool = True):
    (tmp_path / "deadlines.toml").write_text(COURSE_FILE)
    d = deadlines.load(tmp_path / "deadlines.toml")
    z = tmp_path / "c.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for member in (
            f"lovelaceada_1001_5551_{A}.ipynb",
            f"hoppergrace_LATE_1002_5552_{A}.ipynb",
            f"babbagecharles_LATE_3003_5553_{A}.ipynb",
            f"noetheremmy_1005_5554_{A}.ipynb",
        ):
            # the download's time
            zf.writestr(zipfile.ZipInfo(member, date_time=(2027, 1, 10, 9, 0, 0)), NB)
    (tmp_path / "roster.csv").write_text(ROSTER)
    (tmp_path / name).write_text(times_text)
    subs = tmp_path / "submitted"
    res = import_zip(
        z,
        subs,
        A,
        lms="canvas",
        roster=tmp_path / "roster.csv" if roster else None,
        times=read_times([tmp_path / name]),
    )
    return d, subs, res


def _late(d, subs, student):
    return assess(d, A, student, submission_time(subs, student, A))


# the API's response, as `curl .../submissions?include[]=user` saves it (fields trimmed)
API = json.dumps(
    [
        {
            "user_id": 1001,
            "submitted_at": "2026-12-14T22:30:00Z",
            "late": False,
            "seconds_late": 0,
            "workflow_state": "submitted",
            "user": {"id": 1001, "sis_user_id": "2001", "login_id": "ada"},
        },
        {
            "user_id": 1002,
            "submitted_at": "2026-12-14T23:30:00Z",
            "late": True,
            "seconds_late": 1860,
            "workflow_state": "submitted",
            "user": {"id": 1002, "sis_user_id": "2002", "login_id": "grace"},
        },
        {"user_id": 1005, "submitted_at": None, "workflow_state": "unsubmitted"},
    ]
)


def test_the_apis_submitted_at_is_the_time_and_missing_students_keep_the_flag(tmp_path):
    d, subs, res = _setup(tmp_path, API)
    # Ada, Grace by roster id; Charles, Emmy by Canvas id
    assert sorted(res.placed) == ["1005", "2001", "2002", "3003"]
    ada, grace = _late(d, subs, "2001"), _late(d, subs, "2002")
    assert (ada.source, ada.submitted, ada.state) == (
        deadlines.CANVAS_TIMES,
        "2026-12-14T22:30:00+00:00",
        "on time",
    )
    # 23:30 UTC against 22:59 UTC: 31 min, past the 15 min grace: one started day, 10 % of 20
    assert (grace.source, grace.seconds_late, grace.state, grace.penalty_for(20.0)) == (
        deadlines.CANVAS_TIMES,
        1860.0,
        "late by 31 min",
        2.0,
    )
    charles = _late(d, subs, "3003")  # not in the file: Canvas's _LATE flag, as without --times
    assert (charles.source, charles.late, charles.penalty_for(20.0)) == (
        deadlines.CANVAS_FLAG,
        True,
        None,
    )
    assert (
        charles.state.startswith("late by Canvas's _LATE flag")
        and "(not in the Canvas times file)" in charles.state
    )
    # in the file, but not submitted there: her zip file has no time
    emmy = _late(d, subs, "1005")
    assert (emmy.source, emmy.state) == (
        deadlines.CANVAS_FLAG,
        "on time (Canvas: no _LATE flag) (times.json[2]: no submitted_at "
        "(not submitted on Canvas))",
    )


def test_a_csv_by_sis_id_never_matches_a_canvas_user_id(tmp_path):
    """sis_user_id 3003 is a university id; Charles's folder 3003 is his Canvas user id (no roster
    row): not his."""
    csv_text = (
        "sis_user_id,submitted_at\n"
        # Ada: 1 d 23 h 1 min late: two started days, 20 %
        "2001,2026-12-16T22:00:00Z\n"
        "3003,2026-12-01T00:00:00Z\n"
    )  # someone else's university id
    d, subs, _ = _setup(tmp_path, csv_text, "times.csv")
    ada = _late(d, subs, "2001")
    assert (ada.source, ada.state, ada.penalty_for(20.0)) == (
        deadlines.CANVAS_TIMES,
        "late by 1 d 23 h 1 min",
        4.0,
    )
    charles = _late(d, subs, "3003")
    # still his own _LATE flag
    assert charles.source == deadlines.CANVAS_FLAG and charles.late is True
    grace = _late(d, subs, "2002")
    assert "(not in the Canvas times file)" in grace.state


def test_without_a_roster_only_canvas_user_ids_match(tmp_path):
    csv_text = (
        "user_id,sis_user_id,submitted_at\n"
        "1002,2002,2026-12-14T22:00:00Z\n"
        ",1001,2026-12-20T00:00:00Z\n"
    )
    d, subs, _ = _setup(tmp_path, csv_text, "times.csv", roster=False)
    assert _late(d, subs, "1002").state == "on time"  # by user_id
    # sis 1001 is not Canvas user 1001
    assert _late(d, subs, "1001").source == deadlines.CANVAS_FLAG


@pytest.mark.parametrize(
    "rows, says",
    [
        (
            '[{"user_id": 1002, "submitted_at": "yesterday"}]',
            "'yesterday' is not an ISO 8601 date and time",
        ),
        ('[{"user_id": 1002, "submitted_at": "2026-12-14T23:30:00"}]', "has no offset from UTC"),
        ('[{"user_id": 1002, "submitted_at": 1765755000}]', "submitted_at is not a time"),
        (
            '[{"user_id": 1002, "submitted_at": "2026-12-14T23:30:00Z"}, '
            '{"user_id": 1002, "submitted_at": "2026-12-14T20:00:00Z"}]',
            "appears twice with different times",
        ),
    ],
)
def test_a_row_that_cannot_be_used_is_named_and_the_flag_decides(tmp_path, rows, says):
    d, subs, _ = _setup(tmp_path, rows)
    grace = _late(d, subs, "2002")
    assert (
        grace.source == deadlines.CANVAS_FLAG
        and grace.late is True
        and grace.penalty_for(20.0) is None
    )
    assert says in grace.state


@pytest.mark.parametrize(
    "text, says",
    [
        ('{"user_id": 1}', "not a list of Canvas Submission objects"),
        ("[1, 2]", "not a Submission object"),
        ('[{"submitted_at": "2026-12-14T23:30:00Z"}]', "no user_id"),
        ('[{"user_id": [1], "submitted_at": "2026-12-14T23:30:00Z"}]', "user_id is not an id"),
        ("[" * 50_000, "not JSON"),
        (
            "student,when\n1,2\n",
            "has the columns submitted_at and one of user_id, sis_user_id, login_id",
        ),
    ],
)
def test_a_file_that_is_not_a_times_file_is_refused_by_name(tmp_path, text, says):
    p = tmp_path / "times.txt"
    p.write_text(text)
    with pytest.raises(ValueError, match=says.replace("[", r"\[")):
        read_times([p])


def test_an_oversized_file_is_not_read(tmp_path):
    p = tmp_path / "times.json"
    with open(p, "wb") as f:
        f.truncate(MAX_BYTES + 1)
    with pytest.raises(ValueError, match="over"):
        read_times([p])


def test_command_line(tmp_path, capsys):
    from autograde.__main__ import main

    (tmp_path / "deadlines.toml").write_text(COURSE_FILE)
    _setup(tmp_path, API)  # writes the zip, roster and times file
    code = main(
        [
            "--deadlines",
            str(tmp_path / "deadlines.toml"),
            "lms-import",
            str(tmp_path / "c.zip"),
            "--assignment",
            A,
            "--to",
            str(tmp_path / "again"),
            "--lms",
            "canvas",
            "--roster",
            str(tmp_path / "roster.csv"),
            "--times",
            str(tmp_path / "times.json"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert (
        "2002: hoppergrace_LATE_1002_5552_fx.ipynb (late) (submitted 2026-12-14T23:30:00+00:00)"
        in out
    )
    assert (
        "3003: babbagecharles_LATE_3003_5553_fx.ipynb (late) (no time: not in the Canvas times "
        "file)" in out
    )
    (tmp_path / "bad.json").write_text("{")
    assert (
        main(
            [
                "lms-import",
                str(tmp_path / "c.zip"),
                "--assignment",
                A,
                "--to",
                str(tmp_path / "x"),
                "--times",
                str(tmp_path / "bad.json"),
            ]
        )
        == 2
    )
    assert not (tmp_path / "x").exists()
