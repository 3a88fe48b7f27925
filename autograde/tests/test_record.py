"""A grading record, typed (autograde/record.py): the status order, the finishing rule, the wire
forms.

The truth for the finishing rule is the rule as grade.py held it before the record was typed
(``_finish`` at cec0652, copied below verbatim but for its name): on generated records the typed
rule decides the same status and the same detail. The truth for the wire form is the dict itself:
``from_json`` then ``to_json`` gives back every key and value, so the details files and grades.csv
stay byte for byte what they were. Fast (< 2 s).
"""

from __future__ import annotations

import copy
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from autograde.course import REPO, dump_json
from autograde.grades_csv import write_csv
from autograde.record import Condition, GradeRecord, Status

# grade.STATUSES at cec0652, the list the enum replaces
STATUSES_BEFORE = [
    "missing",
    "invalid_name",
    "ambiguous",
    "invalid_notebook",
    "wrong_assignment",
    "error",
    "unsandboxed",
    "timeout",
    "memory_limit",
    "kernel_died",
    "flagged",
    "needs_manual_grade",
    "graded",
]


def finish_before(record: dict) -> dict:
    """grade._finish at cec0652 (the rule before the record was typed), verbatim."""
    conds = record["conditions"]
    kinds = [k for k, _ in conds]
    if record.get("flags") and "flagged" not in kinds:
        conds.append(["flagged", f"{len(record['flags'])} pattern(s) to look at (see flags)"])
        kinds.append("flagged")
    record["status"] = next((s for s in STATUSES_BEFORE if s in kinds), "graded")
    seen, detail = set(), []
    for k, d in conds:
        if (k, d) not in seen and k != "needs_manual_grade":
            seen.add((k, d))
            detail.append(d)
    detail += [
        n
        for n in record.get("notes", [])
        if any(w in n for w in ("put back", "graded as code", "restored as"))
    ][:3]
    manual = [d for k, d in conds if k == "needs_manual_grade"]
    if manual:
        detail.append(f"{len(manual)} answer(s) to grade by hand")
    record["detail"] = "; ".join(detail)
    return record


# -------------------------------------------------------------------------------------------
# strategies
KINDS = st.sampled_from([s.value for s in Status])
TEXT = st.text(max_size=30)
# a few texts repeat, so duplicate conditions (shown once in detail) are generated too
CONDITIONS = st.lists(
    st.tuples(KINDS, st.sampled_from(["a", "b", "cell 3 hit the per-cell time limit"]) | TEXT).map(
        list
    ),
    max_size=8,
)
NOTES = st.lists(
    st.sampled_from(
        [
            "cell 2 put back",
            "cell 4 graded as code",
            "cell 5 restored as markdown",
            "graded fx (1).ipynb as fx.ipynb",
        ]
    )
    | TEXT,
    max_size=6,
)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
EXTRA = st.dictionaries(
    st.sampled_from(
        [
            "late",
            "fingerprint",
            "changed_answers",
            "verify_stderr",
            "log_tail",
            "memory_enforced_by",
            "tamper_reports",
            "hidden_failures",
            "cluster_failure",
        ]
    ),
    JSONISH,
    max_size=4,
)
SCORE = st.floats(min_value=0, max_value=1000, allow_nan=False) | st.integers(0, 100)


@st.composite
def unfinished(draw) -> dict:
    """A record as grade, cluster and gradebook build it before finishing: every key today's code
    may write."""
    record = {
        "student": draw(TEXT),
        "assignment": draw(TEXT),
        "score": draw(SCORE),
        "max_score": draw(SCORE),
        "conditions": draw(CONDITIONS),
        **draw(EXTRA),
    }
    for key, strategy in [
        ("notes", NOTES),
        ("notebooks", st.dictionaries(TEXT, JSONISH, max_size=2)),
        ("flags", st.lists(TEXT, max_size=3)),
    ]:
        if draw(st.booleans()):  # hand-written records (the tests' fixtures) lack some keys
            record[key] = draw(strategy)
    return record


# ------------------------------------------------------------------------------------------- the
# tests
def test_the_status_order_is_the_one_grade_held():
    assert [s.value for s in Status] == STATUSES_BEFORE
    assert list(Status)[-1] is Status.GRADED and Status.most_severe([]) is Status.GRADED


def test_the_documented_statuses_are_the_enum_in_its_order():
    text = (REPO / "docs" / "instructors.md").read_text(encoding="utf-8")
    section = text.split("### Statuses", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^\| `([a-z_]+)` \|", section, re.M) == [s.value for s in Status]


def test_a_status_is_final_unless_answers_wait_for_a_human_or_the_harness_failed():
    # lms.NOT_FINAL before: ("needs_manual_grade", "error")
    assert {s for s in Status if not s.final} == {Status.NEEDS_MANUAL_GRADE, Status.ERROR}


def test_a_misspelt_condition_kind_raises_instead_of_grading_as_graded():
    before = finish_before(
        {"conditions": [["timout", "cell 3 hit the per-cell time limit"]], "notes": []}
    )
    assert before["status"] == "graded"  # the bug: a misspelt kind was no condition at all
    with pytest.raises(ValueError, match="unknown condition kind 'timout'"):
        Condition("timout", "cell 3 hit the per-cell time limit")
    record = GradeRecord.start("alice", "fx", 4.0)
    with pytest.raises(ValueError, match="timout"):
        record.add("timout", "...")
    with pytest.raises(ValueError, match="timout"):
        GradeRecord.from_json(
            {
                "student": "alice",
                "assignment": "fx",
                "score": 0.0,
                "max_score": 4.0,
                "conditions": [["timout", "..."]],
            }
        )
    with pytest.raises(ValueError, match="finished"):
        GradeRecord.from_json(
            {
                "student": "alice",
                "assignment": "fx",
                "score": 0.0,
                "max_score": 4.0,
                "conditions": [],
                "status": "finished",
            }
        )
    with pytest.raises(TypeError):
        Condition(Status.TIMEOUT, None)
    # the wire's string is the Status
    assert Condition("timeout", "x") == Condition(Status.TIMEOUT, "x")


@settings(max_examples=300, derandomize=True, deadline=None)
@given(unfinished())
def test_finishing_decides_what_the_rule_before_decided(record):
    expected = finish_before(copy.deepcopy(record))
    got = GradeRecord.from_json(copy.deepcopy(record)).finish()
    assert got.to_json() == expected
    assert isinstance(got.status, Status) and got.status.value == expected["status"]


@settings(max_examples=300, derandomize=True, deadline=None)
@given(unfinished())
def test_the_wire_form_round_trips_exactly(record):
    finished = finish_before(copy.deepcopy(record))
    for data in (record, finished):
        back = GradeRecord.from_json(copy.deepcopy(data)).to_json()
        assert back == data
        assert dump_json(back) == dump_json(data)  # the details file, byte for byte


# records as the harness's tests write them into OUT/details/ (test_lms.py, test_report.py,
# test_lms_feedback.py)
FIXTURES = [
    {
        "student": "s1",
        "assignment": "02",
        "score": 20.0,
        "max_score": 26.0,
        "conditions": [["needs_manual_grade", "'a_why' is graded by hand"]],
        "flags": [],
        "notebooks": {},
        "status": "needs_manual_grade",
        "detail": "",
    },
    {
        "student": "x\x1b[2J",
        "assignment": "02",
        "score": 0.0,
        "max_score": 26.0,
        "conditions": [["error", "boom"]],
        "flags": [],
        "notebooks": {},
        "status": "error",
        "detail": "boom",
    },
    {
        "student": "s9",
        "assignment": "02",
        "score": 0.0,
        "max_score": 15.0,
        "status": "missing",
        "conditions": [],
        "flags": [],
        "detail": "",
        "notebooks": {},
    },
]


@pytest.mark.parametrize("data", FIXTURES)
def test_the_tests_hand_written_records_round_trip(data):
    assert GradeRecord.from_json(copy.deepcopy(data)).to_json() == data


def test_grades_csv_is_written_from_the_records_dicts(tmp_path):
    records = [
        finish_before(copy.deepcopy(r))
        for r in [
            {
                "student": "b",
                "assignment": "fx",
                "score": 1.5,
                "max_score": 4.0,
                "notes": [],
                "conditions": [
                    ["kernel_died", "cell 2 killed the kernel"],
                    ["timeout", "cell 3 hit the limit"],
                ],
            },
            {
                "student": "a",
                "assignment": "fx",
                "score": 4.0,
                "max_score": 4.0,
                "notes": [],
                "conditions": [],
                "flags": [
                    "answer 'double' holds the instructor notebook's solution or hidden-test "
                    "markers"
                ],
            },
        ]
    ]
    write_csv(tmp_path / "grades.csv", records)
    text = (tmp_path / "grades.csv").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0].startswith("student,assignment,score,max_score,status,flags,detail,")
    assert lines[1].startswith("a,fx,4,4,flagged,") and lines[2].startswith("b,fx,1.5,4,timeout,")
    typed = [GradeRecord.from_json(copy.deepcopy(r)).finish().to_json() for r in records]
    write_csv(tmp_path / "again.csv", typed)
    assert (tmp_path / "again.csv").read_text(encoding="utf-8") == text


def test_a_record_started_and_finished_is_what_grade_wrote_by_hand():
    # grade_one's internal-error record before the record was typed (cec0652), built by hand
    by_hand = finish_before(
        {
            "student": "s",
            "assignment": "fx",
            "score": 0.0,
            "max_score": 4.0,
            "notebooks": {},
            "notes": [],
            "conditions": [["error", "internal error while grading"]],
        }
    )
    typed = (
        GradeRecord.start("s", "fx", 4.0)
        .add(Status.ERROR, "internal error while grading")
        .finish()
        .to_json()
    )
    assert typed == by_hand and json.dumps(typed, sort_keys=True) == json.dumps(
        by_hand, sort_keys=True
    )
    # cluster.failed_record's, with its extra key
    cluster = (
        GradeRecord.start("s", "fx", 4.0, cluster_failure=True)
        .add(Status.ERROR, "lost")
        .finish()
        .to_json()
    )
    assert cluster == finish_before(
        {
            "student": "s",
            "assignment": "fx",
            "max_score": 4.0,
            "score": 0.0,
            "conditions": [["error", "lost"]],
            "notes": [],
            "notebooks": {},
            "cluster_failure": True,
        }
    )
