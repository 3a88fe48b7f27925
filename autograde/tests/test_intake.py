"""Intake (autograde.intake): a submitted notebook is read, identified and rebuilt in a limited
child.

Uses the course's real release notebooks (no kernel runs: ~15 s).
"""

from __future__ import annotations

import json

import pytest

from autograde.course import Course
from autograde.intake import fingerprints, intake
from autograde.tests.conftest import REAL_ASSIGNMENTS

pytestmark = pytest.mark.skipif(len(REAL_ASSIGNMENTS) < 2, reason="needs two released assignments")


@pytest.fixture(scope="module")
def known():
    course = Course()
    return course, {
        a: fingerprints(course.release_notebook(a, a).read_text()) for a in REAL_ASSIGNMENTS
    }


def test_a_notebook_of_another_assignment_is_named_as_such(known):
    course, fp = known
    a, b = REAL_ASSIGNMENTS[0], REAL_ASSIGNMENTS[1]
    raw = course.release_notebook(a, a).read_bytes()
    got = intake(raw, course.release_notebook(b, b).read_text(), b, fp)
    assert got.status == "wrong_assignment" and a in got.detail, got
    # the same after an editor stripped every cell's metadata (as Colab may): recognised by its text
    nb = json.loads(raw)
    for cell in nb["cells"]:
        cell["metadata"] = {}
    got = intake(json.dumps(nb).encode(), course.release_notebook(b, b).read_text(), b, fp)
    assert got.status == "wrong_assignment" and a in got.detail, got
    own = intake(
        course.release_notebook(b, b).read_bytes(), course.release_notebook(b, b).read_text(), b, fp
    )
    assert own.status == "ok" and own.notebook and own.flags == []


@pytest.mark.parametrize(
    "raw, why",
    [
        (b"[" * 100_000 + b"]" * 100_000, "deep"),
        (b"\xff\xfe{", "not valid JSON"),
        (b'{"nbformat": 4, "cells": "x"}', "no list of cells"),
    ],
)
def test_unreadable_notebooks_are_invalid_with_a_reason(known, raw, why):
    course, fp = known
    a = REAL_ASSIGNMENTS[0]
    got = intake(raw, course.release_notebook(a, a).read_text(), a, fp)
    assert got.status == "invalid_notebook" and why in got.detail, got


def test_a_lone_surrogate_is_named_as_such(known):
    """JSON may hold "\\ud800", which is no text; it read "too large or too complex to grade" (found
    by a red team)."""
    course, fp = known
    a = REAL_ASSIGNMENTS[0]
    nb = json.loads(course.release_notebook(a, a).read_text())
    nb["cells"][0]["source"] = "lone \ud800 surrogate"
    got = intake(json.dumps(nb).encode(), course.release_notebook(a, a).read_text(), a, fp)
    assert got.status == "invalid_notebook" and "not valid Unicode" in got.detail, got


def test_a_huge_cell_costs_bounded_time_and_memory(known):
    """A 4 MB cell once made the grader's own process take 2 GB in the scan: now a limited child
    reads it."""
    course, fp = known
    a = REAL_ASSIGNMENTS[0]
    nb = json.loads(course.release_notebook(a, a).read_text())
    nb["cells"].insert(
        3,
        {
            "cell_type": "code",
            "metadata": {},
            "outputs": [],
            "execution_count": None,
            "source": "x = [" + "1, " * (1 << 20) + "]\n" + "y = 1  # " + "z" * (1 << 20),
        },
    )
    got = intake(json.dumps(nb).encode(), course.release_notebook(a, a).read_text(), a, fp)
    assert got.status in ("ok", "invalid_notebook"), got


def test_the_rules_are_read_on_the_cells_the_verification_runs(known):
    """White-box red team 23 (D12): the last cell held honest defs of the answers and ended with
    os.abort(); the kernel died there, so the verification skipped the cell and checked the answers
    the cells above bound (numpy helpers), against rules read on the honest text: 20/26, status
    kernel_died, no rule broken. The grader now reads the rules again without the skipped cells
    (Grader._rules_without): here, the same notebook read with and without its last cell. Control:
    without the skip the honest text is what is read."""
    course, fp = known
    from autograde.verify import rules_of

    a = "02_logits_softmax"
    nb = json.loads(course.release_notebook(a, a).read_text())
    helper = (
        "import numpy as np\n\ndef softmax(logits):\n    import functools\n"
        "    return torch.from_numpy(np.exp(logits.numpy() - functools.reduce(np.logaddexp, "
        "logits.numpy())))\n"
    )
    for cell in nb["cells"]:
        if (cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id") == "softmax":
            cell["source"] = helper
    honest = (
        "def softmax(logits):\n    e = (logits - logits.amax(-1, keepdim=True)).exp()\n    "
        "return e / e.sum(-1, keepdim=True)\n"
    )
    nb["cells"].append(
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "killer",
            "metadata": {},
            "outputs": [],
            "source": honest + "import os\nos.abort()\n",
        }
    )
    rules = rules_of(course, course.root / "solutions" / a / f"{a}.ipynb")
    read_all = intake(
        json.dumps(nb).encode(), course.release_notebook(a, a).read_text(), a, fp, rules=rules
    )
    assert read_all.status == "ok" and not read_all.rule_failures.get("softmax"), (
        read_all.rule_failures
    )
    last = len(json.loads(read_all.notebook)["cells"]) - 1
    without = intake(
        read_all.notebook.encode(),
        course.release_notebook(a, a).read_text(),
        a,
        fp,
        rules=rules,
        skip=[last],
    )
    assert without.status == "ok" and any(
        "numpy.logaddexp" in m for m in without.rule_failures["softmax"]
    ), without.rule_failures
