"""Deadlines and late work (issue 34, part 1): the course file, where a submission's time comes
from, how late it is, the penalty, and what reaches grades.csv, nbgrader's gradebook, the feedback
page and the exports.

Expected values are written by hand here (times in UTC, penalties as arithmetic on the page), never
computed by autograde/deadlines.py. The unit tests take < 6 s in all; the end-to-end grading
(`test_late_work_through_grading`, three students of the fixture course in the sandbox, then a
manual mark, feedback, nbgrader export and both platform exports) 33-64 s on 2 shared cores (load
1-6), plus the fixture course's release (10-16 s, shared with the suite's other fixture tests).
"""

from __future__ import annotations

import csv
import datetime as dt
import html
import json
import os
import re
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from autograde import deadlines, sandbox
from autograde.deadlines import Policy, When, assess, submission_time
from autograde.lms import import_zip

UTC = dt.timezone.utc
PLUS1 = dt.timezone(dt.timedelta(hours=1))
A = "fx"

COURSE_FILE = """\
moodle_zip_timezone = "Europe/Berlin"

[late_policy]
method = "percent"
percent = 10
per = "day"
cap = 50
grace_minutes = 15

[assignments.fx]
due = 2026-12-14T23:59:00+01:00          # 22:59 UTC

[assignments.fx.extensions]
s1 = { days = 2 }
"1004" = "2026-12-15T12:00:00Z"
"""


def _utc(*args) -> dt.datetime:
    return dt.datetime(*args, tzinfo=UTC)


def _course_file(tmp_path: Path, text: str = COURSE_FILE) -> deadlines.Deadlines:
    p = tmp_path / "deadlines.toml"
    p.write_text(text)
    return deadlines.load(p)


# ------------------------------------------------------------------------------------------------
# the policy
def test_percent_per_started_day_up_to_a_cap():
    p = Policy("percent", percent=10, per="day", cap=50)
    assert p.penalty(20.0, 0) == 0.0
    assert p.penalty(20.0, 1) == 2.0  # 1 s late: one started day, 10 % of 20
    assert p.penalty(20.0, 86400) == 2.0  # exactly one day
    assert p.penalty(20.0, 86401) == 4.0  # into the second day: 20 %
    assert p.penalty(20.0, 4 * 86400 + 1) == 10.0  # 5 started days: 50 %
    assert p.penalty(20.0, 30 * 86400) == 10.0  # capped at 50 %
    assert p.penalty(0.0, 86401) == 0.0


def test_percent_per_started_hour_and_zero_and_none():
    # 2 hours: 10 % of 8
    assert Policy("percent", percent=5, per="hour", cap=100).penalty(8.0, 3601) == 0.8
    assert Policy("percent", percent=5, per="hour", cap=100).penalty(8.0, 100 * 3600) == 8.0
    assert Policy("zero").penalty(7.5, 1) == 7.5
    assert Policy("zero").penalty(7.5, 0) == 0.0
    assert Policy("none").penalty(7.5, 10 * 86400) == 0.0


def test_grace_period():
    p = Policy("percent", percent=10, per="day", cap=50, grace_minutes=15)
    assert p.penalty(20.0, 900) == 0.0  # 15 min: within the grace period
    # past it: lateness counts from the due date, one started day
    assert p.penalty(20.0, 901) == 2.0
    assert Policy("zero", grace_minutes=60).penalty(5.0, 3599) == 0.0


def test_policy_rejects_nonsense():
    for bad in (
        {"method": "half"},
        {"per": "week"},
        {"percent": -1},
        {"cap": 150},
        {"grace_minutes": float("nan")},
    ):
        with pytest.raises(ValueError):
            Policy(**bad)


def test_nbgraders_plugin_interface():
    """nbgrader calls late_submission_penalty(student_id, score, total_seconds_late); None means no
    penalty."""
    from nbgrader.plugins import LateSubmissionPlugin
    from traitlets.config import Config

    c = Config()
    deadlines.plugin_config(c, Policy("percent", percent=10, per="day", cap=50, grace_minutes=15))
    assert c.AssignLatePenalties.plugin_class is deadlines.LatePolicy
    plugin = deadlines.LatePolicy(config=c)
    assert isinstance(plugin, LateSubmissionPlugin)
    assert plugin.late_submission_penalty("s1", 20.0, 90000) == 4.0  # 25 h: two started days
    assert plugin.late_submission_penalty("s1", 20.0, 600) is None  # within grace


# ------------------------------------------------------------------------------------------- the
# course file
def test_course_file(tmp_path):
    d = _course_file(tmp_path)
    assert d.due == {A: _utc(2026, 12, 14, 22, 59)}
    assert d.extensions == {
        (A, "s1"): dt.timedelta(days=2),
        (A, "1004"): dt.timedelta(hours=13, minutes=1),
    }
    assert d.policy == Policy("percent", 10, "day", 50, 15)
    assert d.zip_timezone == "Europe/Berlin"
    assert deadlines.load(tmp_path / "absent.toml") == deadlines.Deadlines()


@pytest.mark.parametrize(
    "text, says",
    [
        # naive: ambiguous
        ("[assignments.fx]\ndue = 2026-12-14T23:59:00\n", "no offset from UTC"),
        ('[assignments.fx]\ndue = "next friday"\n', "not an ISO 8601"),
        ("[assignments.fx]\n", "needs due"),
        ("[assignments.fx]\ndue = 2026-12-14T23:59:00Z\nextension = 1\n", "unknown key"),
        (
            "[assignments.fx]\ndue = 2026-12-14T23:59:00Z\n[assignments.fx.extensions]\ns1 = { "
            "fortnights = 1 }\n",
            "extension is",
        ),
        (
            "[assignments.fx]\ndue = 2026-12-14T23:59:00Z\n[assignments.fx.extensions]\ns1 = "
            "2026-12-01T00:00:00Z\n",
            "before the assignment's due date",
        ),
        ('[late_policy]\nmethod = "zero"\nper_day = 3\n', "unknown key"),
        ('moodle_zip_timezone = "Mars/Olympus"\n', "not a time zone"),
    ],
)
def test_course_file_mistakes_are_named(tmp_path, text, says):
    with pytest.raises(ValueError, match=says):
        _course_file(tmp_path, text)


# --------------------------------------------------------------------------------- a policy per
# assignment
OWN_POLICIES = (
    COURSE_FILE
    + """
[assignments.fy]
due = 2026-12-21T23:59:00+01:00          # 22:59 UTC
late_policy = { method = "zero" }        # the rest (grace 15 min) from the course's

[assignments.fz]
due = 2026-12-21T23:59:00+01:00

[assignments.fz.late_policy]
percent = 25                             # method "percent", cap 50 and grace 15 from the course's
per = "hour"
"""
)


def test_an_assignment_may_have_its_own_late_policy(tmp_path):
    d = _course_file(tmp_path, OWN_POLICIES)
    assert d.policy_for("fx") == Policy("percent", 10, "day", 50, 15)  # the course's
    assert d.policy_for("fy") == Policy("zero", 10, "day", 50, 15)
    assert d.policy_for("fz") == Policy("percent", 25, "hour", 50, 15)
    assert d.policy_for("not_in_the_file") == d.policy

    def penalty(a, minutes_late):
        due = {"fx": _utc(2026, 12, 14, 22, 59)}.get(a, _utc(2026, 12, 21, 22, 59))
        late = assess(
            d, a, "s9", When(due + dt.timedelta(minutes=minutes_late), deadlines.EXCHANGE)
        )
        return late.penalty_for(20.0)

    assert penalty("fx", 31) == 2.0  # one started day: 10 % of 20
    assert penalty("fy", 10) is None  # within the course's 15 min grace
    assert penalty("fy", 16) == 20.0  # late work scores 0: all 20 points
    assert penalty("fz", 30) == 5.0  # one started hour: 25 % of 20
    assert penalty("fz", 61) == 10.0  # two started hours, 50 %, the course's cap
    assert penalty("fz", 600) == 10.0
    late = assess(d, "fy", "s9", When(_utc(2026, 12, 22, 0, 0), deadlines.EXCHANGE))
    assert late.policy == {
        "method": "zero",
        "percent": 10,
        "per": "day",
        "cap": 50,
        "grace_minutes": 15,
    }
    assert "late policy: late work scores 0, 15 min grace" in late.text()


@pytest.mark.parametrize(
    "text, says",
    [
        (
            '[assignments.fx]\ndue = 2026-12-14T23:59:00Z\nlate_policy = { method = "half" }\n',
            r"\[assignments.fx.late_policy\]: late_policy.method 'half': one of none, zero, "
            r"percent",
        ),
        (
            "[assignments.fx]\ndue = 2026-12-14T23:59:00Z\n[assignments.fx.late_policy]\nper_day "
            "= 3\n",
            r"\[assignments.fx.late_policy\] has unknown key\(s\) per_day",
        ),
        (
            '[assignments.fx]\ndue = 2026-12-14T23:59:00Z\nlate_policy = "zero"\n',
            r"\[assignments.fx.late_policy\] is a table",
        ),
        (
            "[late_policy]\ncap = 50\n[assignments.fx]\ndue = 2026-12-14T23:59:00Z\nlate_policy = "
            "{ cap = 150 }\n",
            "at most 100",
        ),
        (
            '[assignments.fx]\ndue = 2026-12-14T23:59:00Z\nlate_policy = { percent = "10" }\n',
            "must be a number",
        ),
        ("[assignments.fx]\ndue = 2026-12-14T23:59:00Z\nextensions = 3\n", "extensions is a table"),
    ],
)
def test_an_assignments_policy_mistakes_are_named(tmp_path, text, says):
    with pytest.raises(ValueError, match=says):
        _course_file(tmp_path, text)


# ------------------------------------------------------------------------------------------------
# how late
def test_on_time_late_grace_and_timezones(tmp_path):
    # due 23:59 at UTC+1 = 22:59 UTC; 15 min grace; 10 %/day up to 50 %
    d = _course_file(tmp_path)
    on_time = assess(d, A, "s2", When(_utc(2026, 12, 14, 22, 59), deadlines.EXCHANGE))
    assert (on_time.seconds_late, on_time.late, on_time.state) == (0.0, False, "on time")
    assert on_time.penalty_for(20.0) is None
    grace = assess(d, A, "s2", When(_utc(2026, 12, 14, 23, 10), deadlines.EXCHANGE))
    assert (grace.seconds_late, grace.late) == (660.0, False)
    assert grace.state.startswith("within the 15 min grace period")
    # 23:30 UTC is 00:30 the next day at UTC+1: 31 minutes late, not 1 h 31 min, not on time
    late = assess(d, A, "s2", When(_utc(2026, 12, 14, 23, 30), deadlines.EXCHANGE))
    assert (late.seconds_late, late.late, late.state) == (1860.0, True, "late by 31 min")
    assert late.penalty_for(20.0) == 2.0
    assert late.due == "2026-12-14T22:59:00+00:00"
    text = late.text()
    assert (
        "submitted 2026-12-14 23:30:00 UTC (nbgrader exchange)" in text
        and "due 2026-12-14 22:59:00 UTC" in text
    )


def test_extensions(tmp_path):
    d = _course_file(tmp_path)
    two_days_later = When(_utc(2026, 12, 16, 22, 0), deadlines.EXCHANGE)
    assert assess(d, A, "s2", two_days_later).state == "late by 1 d 23 h 1 min"
    ext = assess(d, A, "s1", two_days_later)  # { days = 2 }: due 2026-12-16 22:59 UTC
    assert (ext.late, ext.state, ext.due, ext.extension_s) == (
        False,
        "on time",
        "2026-12-16T22:59:00+00:00",
        172800.0,
    )
    assert "with an extension of 2 d" in ext.text()
    # own due date 12:00 UTC
    own = assess(d, A, "1004", When(_utc(2026, 12, 15, 13, 0), deadlines.EXCHANGE))
    assert (own.seconds_late, own.state) == (3600.0, "late by 1 h")


def test_missing_due_date_takes_nothing_and_says_so(tmp_path):
    d = _course_file(tmp_path)
    r = assess(d, "02_other", "s1", When(_utc(2030, 1, 1), deadlines.EXCHANGE))
    assert (r.late, r.seconds_late, r.penalty_for(10.0)) == (False, None, None)
    assert r.state == "no due date for 02_other in deadlines.toml"
    r = assess(deadlines.Deadlines(), A, "s1", When(_utc(2030, 1, 1), deadlines.EXCHANGE))
    assert r.state == "no due date (no deadlines.toml)"
    row = {"student": "s1", "assignment": A, "score": 3.0, "late": r.__dict__}
    assert deadlines.csv_fields(row) == [
        "2030-01-01 00:00:00 UTC",
        "nbgrader exchange",
        "",
        "",
        "no due date (no deadlines.toml)",
        "0",
        "3",
    ]


# ----------------------------------------------------------------------------------------- where
# the time is from
def _nb() -> bytes:
    return json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).encode()


def _zip(
    path: Path, members: list[tuple[str, tuple, bytes]], extra: dict[str, bytes] | None = None
) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, when, data in members:
            info = zipfile.ZipInfo(name, date_time=when)
            if extra and name in extra:
                info.extra = extra[name]
            zf.writestr(info, data)
    return path


def test_moodle_zip_member_time_in_moodles_zone(tmp_path):
    d = _course_file(tmp_path)  # moodle_zip_timezone = Europe/Berlin (UTC+1 in December)
    subs = tmp_path / "submitted"
    z = _zip(
        tmp_path / "m.zip",
        [
            # 22:30 UTC
            (
                f"Ada Lovelace_2001_assignsubmission_file_/{A}.ipynb",
                (2026, 12, 14, 23, 30, 0),
                _nb(),
            ),
            # 23:30 UTC
            (
                f"Grace Hopper_2002_assignsubmission_file_/{A}.ipynb",
                (2026, 12, 15, 0, 30, 0),
                _nb(),
            ),
            (f"Alan Turing_2003_assignsubmission_file_/{A}.ipynb", (2026, 12, 1, 0, 0, 0), _nb()),
            # Info-ZIP's extended timestamp (0x5455): Unix seconds, UTC; it wins over the DOS field
        ],
        extra={
            f"Alan Turing_2003_assignsubmission_file_/{A}.ipynb": b"\x55\x54\x05\x00\x01"
            + int(_utc(2026, 12, 15, 2, 0).timestamp()).to_bytes(4, "little")
        },
    )
    import_zip(z, subs, A, lms="moodle", zip_timezone=d.zip_timezone)
    assert submission_time(subs, "2001", A) == When(
        _utc(2026, 12, 14, 22, 30), deadlines.MOODLE_ZIP
    )
    assert submission_time(subs, "2002", A) == When(
        _utc(2026, 12, 14, 23, 30), deadlines.MOODLE_ZIP
    )
    assert submission_time(subs, "2003", A) == When(_utc(2026, 12, 15, 2, 0), deadlines.MOODLE_ZIP)
    assert assess(d, A, "2001", submission_time(subs, "2001", A)).state == "on time"
    assert assess(d, A, "2002", submission_time(subs, "2002", A)).state == "late by 31 min"


def test_canvas_flag_is_the_verdict_and_its_zip_time_is_not_used(tmp_path):
    """Canvas's zip members carry the time the zip was made (canvas-lms ContentZipper writes each
    with rubyzip's get_output_stream, whose entry time defaults to now): a download after the
    deadline would make everyone late. So only the `_LATE` flag counts, and without a time no
    penalty is computed: the row says so."""
    d = _course_file(tmp_path)
    subs = tmp_path / "submitted"
    made = (2027, 1, 10, 9, 0, 0)  # the download, weeks after the deadline
    z = _zip(
        tmp_path / "c.zip",
        [
            (f"lovelaceada_1001_5551_{A}.ipynb", made, _nb()),
            (f"hoppergrace_LATE_1002_5552_{A}.ipynb", made, _nb()),
            (f"babbagecharles_LATE_1004_5553_{A}.ipynb", made, _nb()),
        ],
    )
    import_zip(z, subs, A, lms="canvas")
    assert submission_time(subs, "1001", A) == When(
        None, deadlines.CANVAS_FLAG, platform_late=False
    )
    on_time = assess(d, A, "1001", submission_time(subs, "1001", A))
    assert (on_time.late, on_time.seconds_late, on_time.state) == (
        False,
        0.0,
        "on time (Canvas: no _LATE flag)",
    )
    late = assess(d, A, "1002", submission_time(subs, "1002", A))
    assert (late.late, late.seconds_late, late.penalty_for(20.0)) == (True, None, None)
    assert (
        late.state.startswith("late by Canvas's _LATE flag") and "no penalty applied" in late.state
    )
    # an extension in the course file that Canvas did not know: Canvas's flag cannot be judged
    # without a time
    ext = assess(d, A, "1004", submission_time(subs, "1004", A))
    assert ext.late is False and "check by hand" in ext.state


def test_exchange_timestamp_in_nbgraders_format(tmp_path):
    folder = tmp_path / "submitted" / "s1" / A
    folder.mkdir(parents=True)
    (folder / f"{A}.ipynb").write_bytes(_nb())
    # nbgrader submit's default format
    (folder / "timestamp.txt").write_text("2026-12-14 23:30:00.123456 UTC")
    assert submission_time(tmp_path / "submitted", "s1", A) == When(
        _utc(2026, 12, 14, 23, 30, 0, 123456), deadlines.EXCHANGE
    )
    # c.Exchange.timezone = "Europe/Berlin"
    (folder / "timestamp.txt").write_text("2026-12-15 00:30:00.000000 CET")
    assert submission_time(tmp_path / "submitted", "s1", A).at == _utc(2026, 12, 14, 23, 30)


def test_file_time_is_the_last_resort(tmp_path):
    folder = tmp_path / "submitted" / "s1" / A
    folder.mkdir(parents=True)
    nb = folder / f"{A}.ipynb"
    nb.write_bytes(_nb())
    os.utime(nb, (0, _utc(2026, 12, 14, 23, 0).timestamp()))
    assert submission_time(tmp_path / "submitted", "s1", A) == When(
        _utc(2026, 12, 14, 23, 0), deadlines.FILE_TIME
    )
    (folder / "timestamp.txt").write_text("not a time")
    got = submission_time(tmp_path / "submitted", "s1", A)
    assert got.source == deadlines.FILE_TIME and "not a time nbgrader can read" in got.note
    # not nbgrader's
    (folder / "timestamp.txt").write_text("2026-12-14 22:00:00 UTC" + " " * 300)
    assert submission_time(tmp_path / "submitted", "s1", A).source == deadlines.FILE_TIME
    assert submission_time(tmp_path / "submitted", "nobody", A) == When(None, "")


def test_forged_timestamp_never_makes_lms_work_on_time(tmp_path):
    """A student's own timestamp.txt (uploaded beside the notebook, or put in the folder) never
    counts where the platform gave a time or a verdict: Moodle's zip time and Canvas's flag win;
    lms-import never extracts it."""
    d = _course_file(tmp_path)
    subs = tmp_path / "submitted"
    early = "2026-12-01 00:00:00.000000 UTC"
    z = _zip(
        tmp_path / "m.zip",
        [
            (
                f"Grace Hopper_2002_assignsubmission_file_/{A}.ipynb",
                (2026, 12, 16, 12, 0, 0),
                _nb(),
            ),
            (
                "Grace Hopper_2002_assignsubmission_file_/timestamp.txt",
                (2026, 12, 16, 12, 0, 0),
                early.encode(),
            ),
        ],
    )
    res = import_zip(z, subs, A, lms="moodle", zip_timezone=d.zip_timezone)
    assert (
        "Grace Hopper_2002_assignsubmission_file_/timestamp.txt",
        "not a notebook",
    ) in res.skipped
    assert not (subs / "2002" / A / "timestamp.txt").exists()
    (subs / "2002" / A / "timestamp.txt").write_text(early)  # and if it got there anyway
    got = assess(d, A, "2002", submission_time(subs, "2002", A))
    assert (got.source, got.late, got.state) == (
        deadlines.MOODLE_ZIP,
        True,
        "late by 1 d 12 h 1 min",
    )
    c = _zip(
        tmp_path / "c.zip",
        [(f"hoppergrace_LATE_1002_5552_{A}.ipynb", (2026, 12, 1, 0, 0, 0), _nb())],
    )
    import_zip(c, subs, A, lms="canvas")
    (subs / "1002" / A / "timestamp.txt").write_text(early)
    assert assess(d, A, "1002", submission_time(subs, "1002", A)).late is True


def test_timestamp_link_is_not_followed(tmp_path):
    folder = tmp_path / "submitted" / "s1" / A
    folder.mkdir(parents=True)
    (folder / f"{A}.ipynb").write_bytes(_nb())
    (tmp_path / "elsewhere.txt").write_text("2026-12-01 00:00:00 UTC")
    (folder / "timestamp.txt").symlink_to(tmp_path / "elsewhere.txt")
    assert submission_time(tmp_path / "submitted", "s1", A).source == deadlines.FILE_TIME
    # a folder linked to a classmate's
    (tmp_path / "submitted" / "s2").symlink_to(tmp_path / "submitted" / "s1")
    assert submission_time(tmp_path / "submitted", "s2", A) == When(
        None, "", note="the student's folder is a link"
    )


def test_a_damaged_zip_time_is_no_time(tmp_path):
    d = _course_file(tmp_path)
    z = _zip(
        tmp_path / "m.zip",
        [(f"Ada Lovelace_2001_assignsubmission_file_/{A}.ipynb", (1980, 0, 0, 0, 0, 0), _nb())],
    )
    import_zip(z, tmp_path / "s", A, lms="moodle")  # imported all the same
    got = assess(d, A, "2001", submission_time(tmp_path / "s", "2001", A))
    assert (got.late, got.seconds_late, got.state) == (
        False,
        None,
        "no submission time (the moodle import record holds no time)",
    )


# ------------------------------------------------------------------------------------- through the
# grader
def _rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@pytest.mark.skipif(
    sandbox.unavailable() is not None, reason=f"no sandbox: {sandbox.unavailable()}"
)
def test_late_work_through_grading(fx_course, tmp_path):
    """Three students graded by `grade` (what `python -m autograde grade` runs): on time, late
    (exchange time, 25 h late: two started days, 20 % of 3 = 0.6), late but with an extension. Then
    a manual mark (the penalty follows the final score: 20 % of 4 = 0.8), the feedback page,
    grades.csv, nbgrader's gradebook and both exports.

    Why long: one grading run (the slow part), followed through each of its outputs in turn."""
    from nbgrader.api import Gradebook

    from autograde.grade import Limits, grade
    from autograde.gradebook import export, regenerate_feedback
    from autograde.lms import export_grades
    from autograde.tests.conftest import student_notebook, submit

    course_file = tmp_path / "deadlines.toml"
    course_file.write_text(
        '[late_policy]\nmethod = "percent"\npercent = 10\nper = "day"\ncap = 50\n'
        "grace_minutes = 10\n\n[assignments.fx]\ndue = 2026-12-01T12:00:00+01:00\n\n"
        "[assignments.fx.extensions]\ncarol = { days = 3 }\n"
    )
    course = replace(fx_course, deadlines_path=course_file)
    subs, out = tmp_path / "submitted", tmp_path / "out"
    right = {
        "double": "def double(x):\n    return x * 2\n",
        "square": "def square(x):\n    return x ** 2\n",
    }
    times = {
        "alice": "2026-12-01 10:59:00.000000 UTC",  # due 11:00 UTC: on time
        "bob": "2026-12-02 12:00:01.000000 UTC",  # 25 h 0 min 1 s late
        "carol": "2026-12-03 11:00:00.000000 UTC",
    }  # 2 days late, 3 days' extension
    for student, stamp in times.items():
        submit(subs, student, student_notebook(course, right))
        (subs / student / A / "timestamp.txt").write_text(stamp)
    grade(course, subs, out, limits=Limits(wall_s=120, memory_bytes=2 << 30), log=lambda *_: None)

    rows = {r["student"]: r for r in _rows(out / "grades.csv")}
    assert list(rows["bob"])[:7] == [
        "student",
        "assignment",
        "score",
        "max_score",
        "status",
        "flags",
        "detail",
    ]
    got = {
        s: (r["score"], r["seconds_late"], r["lateness"], r["late_penalty"], r["final_score"])
        for s, r in rows.items()
    }
    assert got == {
        "alice": ("3", "0", "on time", "0", "3"),
        "bob": ("3", "90001", "late by 1 d 1 h 1 min", "0.6", "2.4"),
        "carol": ("3", "0", "on time", "0", "3"),
    }
    assert (rows["bob"]["submitted"], rows["bob"]["time_source"], rows["bob"]["due"]) == (
        "2026-12-02 12:00:01 UTC",
        "nbgrader exchange",
        "2026-12-01 11:00:00 UTC",
    )
    assert rows["carol"]["due"] == "2026-12-04 11:00:00 UTC"

    # nbgrader keeps it: the due date, each timestamp, carol's extension, bob's penalty (from
    # nbgrader's plugin call)
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        assert gb.find_assignment(A).duedate == dt.datetime(2026, 12, 1, 11, 0)
        bob, carol = gb.find_submission(A, "bob"), gb.find_submission(A, "carol")
        assert (bob.timestamp, bob.total_seconds_late) == (
            dt.datetime(2026, 12, 2, 12, 0, 1),
            90001.0,
        )
        assert carol.extension == dt.timedelta(days=3) and carol.total_seconds_late == 0
        assert gb.find_submission_notebook(A, A, "bob").late_submission_penalty == pytest.approx(
            0.6
        )
        assert not gb.find_submission_notebook(A, A, "alice").late_submission_penalty

    page = html.unescape(
        re.sub(r"<[^>]+>", "", (out / "feedback" / "bob" / A / f"{A}.html").read_text())
    )
    assert "submitted 2026-12-02 12:00:01 UTC (nbgrader exchange)" in page
    assert "late by 1 d 1 h 1 min" in page and "late penalty 0.6 point(s)" in page
    assert "on time" in html.unescape(
        re.sub(r"<[^>]+>", "", (out / "feedback" / "alice" / A / f"{A}.html").read_text())
    )

    # formgrader: bob's written answer, 1 point
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        g = gb.find_grade("a_why", A, A, "bob")
        g.manual_score, g.needs_manual_grade = 1.0, False
        gb.db.commit()
    regenerate_feedback(out)
    export(out)
    bob = {r["student"]: r for r in _rows(out / "grades.csv")}["bob"]
    assert (bob["score"], bob["late_penalty"], bob["final_score"]) == ("4", "0.8", "3.2")
    page = html.unescape(
        re.sub(r"<[^>]+>", "", (out / "feedback" / "bob" / A / f"{A}.html").read_text())
    )
    assert "late penalty 0.8 point(s)" in page

    # nbgrader's own export, run in OUT as an instructor would (OUT/nbgrader_config.py names the
    # gradebook)
    import subprocess
    import sys

    env = {
        **os.environ,
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
        "PYTHONPATH": os.pathsep.join(course.path_entries()),
    }
    done = subprocess.run(
        [sys.executable, "-m", "nbgrader", "export", "--to", str(tmp_path / "nbgrader.csv")],
        cwd=out,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    nbx = {r["student_id"]: r for r in _rows(tmp_path / "nbgrader.csv")}
    assert (
        nbx["bob"]["duedate"],
        nbx["bob"]["timestamp"],
        nbx["bob"]["raw_score"],
        nbx["bob"]["late_submission_penalty"],
        nbx["bob"]["score"],
    ) == ("2026-12-01 11:00:00", "2026-12-02 12:00:01", "4.0", "0.8", "3.2")

    export_grades(out, tmp_path / "moodle.csv", "moodle", log=lambda *_: None)
    moodle = {r["ID number"]: r for r in _rows(tmp_path / "moodle.csv")}
    assert moodle["bob"][A] == "3.2" and "late by 1 d 1 h 1 min" in moodle["bob"]["Lateness"]
    assert "late penalty 0.8 point(s)" in moodle["bob"]["Lateness"] and moodle["alice"][
        "Lateness"
    ].startswith("on time")
    said = []
    export_grades(out, tmp_path / "canvas.csv", "canvas", log=said.append)
    with open(tmp_path / "canvas.csv", newline="") as f:
        canvas = list(csv.reader(f))
    # no column Canvas would
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", A]
    # take for an assignment
    assert {r[2]: r[5] for r in canvas[2:]}["bob"] == "3.2"
    assert any("bob (late by 1 d 1 h 1 min" in s for s in said)


def test_command_line_reads_the_course_file(tmp_path, capsys):
    """`--deadlines` names the course file: lms-import reads Moodle's zone from it; a mistake stops
    `grade` in one line before anything is written."""
    from autograde.__main__ import main

    good = tmp_path / "term.toml"
    good.write_text('moodle_zip_timezone = "Europe/Berlin"\n')
    z = _zip(
        tmp_path / "m.zip",
        [(f"Ada Lovelace_2001_assignsubmission_file_/{A}.ipynb", (2026, 12, 15, 0, 30, 0), _nb())],
    )
    assert (
        main(
            [
                "--deadlines",
                str(good),
                "lms-import",
                str(z),
                "--assignment",
                A,
                "--to",
                str(tmp_path / "s"),
            ]
        )
        == 0
    )
    assert submission_time(tmp_path / "s", "2001", A).at == _utc(2026, 12, 14, 23, 30)
    # the instructor can check it
    assert "(submitted 2026-12-14T23:30:00+00:00)" in capsys.readouterr().out
    bad = tmp_path / "bad.toml"
    bad.write_text("[assignments.fx]\ndue = 2026-12-14T23:59:00\n")
    capsys.readouterr()
    assert (
        main(
            ["--deadlines", str(bad), "grade", str(tmp_path / "s"), "--out", str(tmp_path / "out")]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "has no offset from UTC" in err and "bad.toml" in err
    assert not (tmp_path / "out").exists()
