"""Gradescope runs and late work (issue 34): the submission time and Gradescope's due date from
``/autograder/submission_metadata.json``, the course file's due dates, extensions and late policy
(carried in the bundle), and the penalty in results.json.

Truth: the example of Gradescope's documentation ("Submission Metadata",
gradescope-autograders.readthedocs.io), its comments removed, and times and penalties worked by hand
below (-07:00 is 7 h behind UTC). The unit tests take < 3 s; the run through the bundle
(`test_a_late_run_says_so_and_takes_the_penalty`, one sandboxed grading of the fixture course) 15-40
s on 2 shared cores.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace
from pathlib import Path

import pytest

from autograde import deadlines, sandbox
from autograde.accounts import record_path
from autograde.course import dump_json, write_atomic
from autograde.deadlines import assess, submission_time
from autograde.gradescope import (
    METADATA,
    METADATA_BYTES,
    STUDENT,
    MetaStatus,
    course_deadlines,
    read_metadata,
    time_record,
)

UTC = dt.timezone.utc
A = "fx"
DOCUMENTED = {  # Gradescope's documented example, as JSON
    "id": 123456,
    "created_at": "2018-07-01T14:22:32.365935-07:00",
    "assignment": {
        "due_date": "2018-07-31T23:00:00.000000-07:00",
        "group_size": 4,
        "group_submission": True,
        "id": 25828,
        "course_id": 1234,
        "late_due_date": None,
        "release_date": "2018-07-02T00:00:00.000000-07:00",
        "title": "Programming Assignment 1",
        "total_points": "20.0",
    },
    "submission_method": "upload",
    "users": [{"email": "student@example.com", "id": 1234, "name": "Student User"}],
    "previous_submissions": [
        {"submission_time": "2017-04-06T14:24:48.087023-07:00", "score": 0.0, "results": {}}
    ],
}
POLICY = '[late_policy]\nmethod = "percent"\npercent = 10\nper = "day"\ncap = 50\n'


def _meta(tmp_path: Path, data) -> Path:
    p = tmp_path / METADATA
    p.write_text(data if isinstance(data, str) else json.dumps(data))
    return p


def _course(fx_course, tmp_path: Path, text: str):
    p = tmp_path / "deadlines.toml"
    p.write_text(text)
    return replace(fx_course, deadlines_path=p)


def _late(tmp_path: Path, course, meta) -> deadlines.Lateness:
    """What the run does: the course file with Gradescope's word, the import record, the
    assessment."""
    term, why = course_deadlines(course, A, meta)
    subs = tmp_path / "submitted"
    write_atomic(record_path(subs, A), dump_json(time_record(meta, why)))
    return assess(term, A, STUDENT, submission_time(subs, STUDENT, A))


def test_the_documented_example_is_read(tmp_path):
    m = read_metadata(_meta(tmp_path, DOCUMENTED))
    assert m.status is MetaStatus.OK and m.problem() == ""
    assert m.created_at == dt.datetime(2018, 7, 1, 21, 22, 32, 365935, tzinfo=UTC)
    assert m.due == dt.datetime(2018, 8, 1, 6, 0, tzinfo=UTC)  # 23:00 at -07:00
    assert m.late_due is None
    assert m.users == (("1234", "student@example.com", "Student User"),)


def test_gradescopes_due_date_when_the_course_file_has_none(fx_course, tmp_path):
    course = _course(fx_course, tmp_path, POLICY)
    on_time = _late(tmp_path, course, read_metadata(_meta(tmp_path, DOCUMENTED)))
    assert (on_time.state, on_time.source, on_time.due) == (
        "on time",
        deadlines.GRADESCOPE,
        "2018-08-01T06:00:00+00:00",
    )
    late = _late(
        tmp_path,
        course,
        read_metadata(_meta(tmp_path, {**DOCUMENTED, "created_at": "2018-08-02T07:00:00-07:00"})),
    )
    # 2018-08-02 14:00 UTC against 2018-08-01 06:00 UTC: 32 h late, two started days, 20 % of 20
    assert (late.seconds_late, late.state, late.penalty_for(20.0)) == (
        115200.0,
        "late by 1 d 8 h",
        4.0,
    )


def test_the_course_file_wins_and_its_extensions_apply_by_email_or_gradescope_id(
    fx_course, tmp_path
):
    text = (
        POLICY
        + "\n[assignments.fx]\ndue = 2018-07-31T23:00:00-07:00\n\n[assignments.fx.extensions]\n"
        '"Student@Example.com" = { days = 1 }\n"5678" = { days = 2 }\n'
    )
    course = _course(fx_course, tmp_path, text)
    gradescope_says = {
        **DOCUMENTED,
        "created_at": "2018-08-02T07:00:00-07:00",
        "assignment": {**DOCUMENTED["assignment"], "due_date": "2018-09-30T23:00:00-07:00"},
    }
    one = _late(tmp_path, course, read_metadata(_meta(tmp_path, gradescope_says)))
    # the course file's due date (not Gradescope's September one) plus a day: due 2018-08-02 06:00
    # UTC, 8 h late
    assert (one.due, one.extension_s, one.state, one.penalty_for(20.0)) == (
        "2018-08-02T06:00:00+00:00",
        86400.0,
        "late by 8 h",
        2.0,
    )
    group = {
        **gradescope_says,
        "users": [*DOCUMENTED["users"], {"email": "", "id": 5678, "name": "Partner"}],
    }
    two = _late(tmp_path, course, read_metadata(_meta(tmp_path, group)))
    # the group's most generous extension
    assert (two.extension_s, two.state) == (172800.0, "on time")
    stranger = {
        **gradescope_says,
        "users": [{"email": "other@example.com", "id": 9, "name": "Other"}],
    }
    three = _late(tmp_path, course, read_metadata(_meta(tmp_path, stranger)))
    assert (three.extension_s, three.state) == (0.0, "late by 1 d 8 h")


def test_an_assignments_own_policy_applies_on_gradescope(fx_course, tmp_path):
    course = _course(
        fx_course,
        tmp_path,
        POLICY + "\n[assignments.fx]\ndue = 2018-07-31T23:00:00-07:00\n"
        'late_policy = { method = "zero" }\n',
    )
    late = _late(
        tmp_path,
        course,
        read_metadata(_meta(tmp_path, {**DOCUMENTED, "created_at": "2018-08-01T00:00:00-07:00"})),
    )
    assert (late.state, late.penalty_for(20.0)) == ("late by 1 h", 20.0)


@pytest.mark.parametrize(
    "data, status, says",
    [
        (None, MetaStatus.MISSING, "no submission_metadata.json"),
        ("{not json", MetaStatus.UNREADABLE, "not UTF-8 JSON"),
        ("[1, 2]", MetaStatus.UNREADABLE, "not an object"),
        # deeper than Python recurses
        ("[" * 100_000 + "]" * 100_000, MetaStatus.UNREADABLE, "not UTF-8 JSON"),
        ({**DOCUMENTED, "assignment": "fx"}, MetaStatus.UNREADABLE, "assignment object"),
        (
            {**DOCUMENTED, "created_at": 1530480152},
            MetaStatus.MALFORMED,
            "created_at is not a time (int)",
        ),
        (
            {**DOCUMENTED, "created_at": "yesterday"},
            MetaStatus.MALFORMED,
            "'yesterday' is not an ISO 8601 time",
        ),
        (
            {**DOCUMENTED, "created_at": "2018-07-01T14:22:32"},
            MetaStatus.MALFORMED,
            "has no offset from UTC",
        ),
        (
            {**DOCUMENTED, "created_at": "x" * 10_000},
            MetaStatus.MALFORMED,
            "created_at is not a time",
        ),
        (
            {k: v for k, v in DOCUMENTED.items() if k != "created_at"},
            MetaStatus.MALFORMED,
            "created_at is not a time",
        ),
        (
            {**DOCUMENTED, "assignment": {"due_date": ["2018"]}},
            MetaStatus.MALFORMED,
            "assignment.due_date",
        ),
        ({**DOCUMENTED, "users": {"id": 1}}, MetaStatus.MALFORMED, "users is not a list"),
        ({**DOCUMENTED, "users": [{"id": 1}] * 51}, MetaStatus.MALFORMED, "at most 50"),
        ({**DOCUMENTED, "users": [{"id": True}]}, MetaStatus.MALFORMED, "users[0].id"),
        ({**DOCUMENTED, "users": [{"id": 1, "email": {"a": 1}}]}, MetaStatus.MALFORMED, "users[0]"),
    ],
)
def test_metadata_that_cannot_be_used_is_named_and_grading_goes_on(
    fx_course, tmp_path, data, status, says
):
    """A file the platform writes, read as data: each way it can be unusable has its status and a
    reason; the submission is graded (no crash, no 0) and its lateness says why it was not
    assessed."""
    path = tmp_path / METADATA if data is None else _meta(tmp_path, data)
    m = read_metadata(path)
    assert m.status is status and says in m.detail, m
    late = _late(
        tmp_path,
        _course(fx_course, tmp_path, POLICY + "\n[assignments.fx]\ndue = 2018-07-31T23:00:00Z\n"),
        m,
    )
    assert (late.late, late.seconds_late, late.penalty_for(20.0)) == (False, None, None)
    assert late.state == f"no submission time ({status.value}: {m.detail})"


def test_an_oversized_or_linked_file_is_not_read(tmp_path):
    big = tmp_path / METADATA
    with open(big, "wb") as f:
        f.truncate(METADATA_BYTES + 1)
    assert read_metadata(big).status is MetaStatus.TOO_LARGE
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps(DOCUMENTED))
    big.unlink()
    big.symlink_to(elsewhere)
    assert read_metadata(big).status is MetaStatus.UNREADABLE


@pytest.mark.skipif(
    sandbox.unavailable() is not None, reason=f"no sandbox: {sandbox.unavailable()}"
)
def test_a_late_run_says_so_and_takes_the_penalty(fx_course, tmp_path):
    """The bundle carries the course file; run_autograder reads submission_metadata.json: 25 h 0 min
    1 s late is two started days, 20 % of the 3 points earned, so results.json's score is 2.4 and
    its output says why."""
    from autograde.gradescope import build_bundle
    from autograde.tests.conftest import student_notebook
    from autograde.tests.test_gradescope import _autograder, _check_schema, _run

    course = _course(
        fx_course, tmp_path, POLICY + "\n[assignments.fx]\ndue = 2026-12-01T12:00:00+01:00\n"
    )
    bundle = build_bundle(course, A, tmp_path / "bundle" / "autograder.zip")
    right = student_notebook(
        fx_course,
        {
            "double": "def double(x):\n    return 2 * x",
            "square": "def square(x):\n    return x * x",
        },
    )
    root = _autograder(tmp_path / "run", bundle, right)
    _meta(
        root,
        {
            **DOCUMENTED,
            "created_at": "2026-12-02T12:00:01Z",
            "assignment": {**DOCUMENTED["assignment"], "due_date": "2026-12-01T11:00:00Z"},
        },
    )
    res = _run(root)
    _check_schema(res)
    assert sum(t["score"] for t in res["tests"]) == 3.0  # the tests show the points earned ...
    assert res["score"] == 2.4  # ... the total is after the penalty
    assert "late by 1 d 1 h 1 min" in res["output"] and "(gradescope created_at)" in res["output"]
    assert "Score after the late penalty: 3 - 0.6 = 2.4" in res["output"]


def test_any_metadata_file_is_read_or_named_never_raised(tmp_path_factory):
    """Fuzzed (Hypothesis, bounded): any JSON value, any field of the documented shape replaced by
    any JSON value, and any bytes, give a Metadata whose status is OK with every time aware, or a
    named status with a detail; read_metadata never raises."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    json_values = st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False)
        | st.text(max_size=40),
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=12,
    )
    fields = st.sampled_from(["created_at", "assignment", "users", "id"])
    inner_fields = st.sampled_from(["due_date", "late_due_date", "title"])
    folder = tmp_path_factory.mktemp("fuzz")

    def check(m) -> None:
        assert isinstance(m.status, MetaStatus)
        if m.status is MetaStatus.OK:
            assert m.created_at.tzinfo is not None
            assert all(t is None or t.tzinfo is not None for t in (m.due, m.late_due))
        else:
            assert m.detail

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        st.one_of(
            json_values,
            st.tuples(fields, json_values),
            st.tuples(inner_fields, json_values),
            st.binary(max_size=200),
        )
    )
    def run(data):
        if isinstance(data, bytes):
            (folder / METADATA).write_bytes(data)
        elif isinstance(data, tuple) and data[0] in ("due_date", "late_due_date", "title"):
            _meta(
                folder, {**DOCUMENTED, "assignment": {**DOCUMENTED["assignment"], data[0]: data[1]}}
            )
        elif isinstance(data, tuple):
            _meta(folder, {**DOCUMENTED, data[0]: data[1]})
        else:
            _meta(folder, data)
        check(read_metadata(folder / METADATA))

    run()
