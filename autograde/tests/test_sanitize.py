"""Rebuilding nbgrader metadata from the release notebook; feedback without hidden tests. Fast (< 1
s)."""

import copy
import json

import nbformat
import pytest

from autograde.course import nbg
from autograde.inside.sanitize import InvalidNotebook, feedback_safe, parse_submission, rebuild
from autograde.tests.fixture import source_notebook


@pytest.fixture()
def release():
    """A release-like notebook: the source with nbgrader's stubs in answer cells."""
    nb = source_notebook()
    for cell in nb.cells:
        if nbg(cell).get("solution") and cell.cell_type == "code":
            head = cell.source.split("### BEGIN SOLUTION")[0]
            cell.source = head + "    # YOUR CODE HERE\n    raise NotImplementedError()"
        if nbg(cell).get("grade") and not nbg(cell).get("solution"):
            cell.source = cell.source.split("### BEGIN HIDDEN TESTS")[0]
    return nb


def _answered(release):
    nb = json.loads(json.dumps(release))
    nb["cells"][2]["source"] = "def double(x):\n    return 2 * x\n"
    nb["cells"][5]["source"] = "def square(x):\n    return x ** 2\n"
    return nb


def _ids(nb):
    return [nbg(c).get("grade_id") for c in nb.cells]


def test_untouched_notebook_is_rebuilt_identically(release):
    nb, notes = rebuild(json.dumps(release).encode(), release)
    assert notes == []
    assert [c.source for c in nb.cells] == [c.source for c in release.cells]
    assert [c.metadata for c in nb.cells] == [c.metadata for c in release.cells]


def test_stripped_metadata_and_new_ids_are_recovered(release):
    sub = _answered(release)
    for i, c in enumerate(sub["cells"]):
        c["metadata"] = {}
        c["id"] = f"colab-{i}"
    nb, notes = rebuild(json.dumps(sub).encode(), release)
    assert _ids(nb) == _ids(release)
    assert nb.cells[2].source.endswith("return 2 * x\n") and nb.cells[5].source.endswith(
        "return x ** 2\n"
    )
    assert "demo" in nb.cells[4].metadata["tags"]
    assert any("rebuilt" in n for n in notes)


def test_forged_metadata_is_not_trusted(release):
    sub = _answered(release)
    sub["cells"][3]["source"] = "pass  # student replaced the test"
    sub["cells"][3]["metadata"]["nbgrader"]["points"] = 100
    sub["cells"][1]["metadata"]["nbgrader"] = {
        "grade": True,
        "grade_id": "bonus",
        "points": 50,
        "solution": False,
    }
    sub["cells"][1]["metadata"]["tags"] = ["demo"]  # would skip the setup cell
    nb, _ = rebuild(json.dumps(sub).encode(), release)
    assert _ids(nb) == _ids(release)
    assert nb.cells[3].source == release.cells[3].source and nbg(nb.cells[3])["points"] == 2
    assert "tags" not in nb.cells[1].metadata


def test_added_moved_and_deleted_cells(release):
    sub = _answered(release)
    helper = {
        "cell_type": "code",
        "metadata": {},
        "source": "def helper(x):\n    return x",
        "outputs": [],
        "execution_count": None,
        "id": "helper",
    }
    sub["cells"].insert(2, helper)  # a helper before the answer
    del sub["cells"][7]  # the square test cell (index 6 before the insert)
    dup = copy.deepcopy(sub["cells"][4])  # the double test, duplicated at the end (same id)
    sub["cells"].append(dup)
    nb, notes = rebuild(json.dumps(sub).encode(), release)
    ids = [i for i in _ids(nb) if i]
    assert ids == [i for i in _ids(release) if i]  # every graded cell exactly once, in order
    assert any(c.source.startswith("def helper") for c in nb.cells)
    assert nb.cells[[nbg(c).get("grade_id") for c in nb.cells].index("double")].source.endswith(
        "return 2 * x\n"
    )
    assert any("test_square" in n for n in notes)
    assert len({c.id for c in nb.cells}) == len(nb.cells)


def test_invalid_submissions_are_named():
    for raw, why in [
        (b'{"cells": [', "not valid JSON"),
        (b"[]", "not a notebook"),
        (b"\xff\xfe", "not valid JSON"),
        (b'{"nbformat": 4, "cells": [{"cell_type": "code", "source": 3}]}', "source"),
        (b'{"nbformat": 4}', "no list of cells"),
    ]:
        with pytest.raises(InvalidNotebook, match=why):
            parse_submission(raw)


def test_old_format_is_converted(release):
    v3 = nbformat.writes(nbformat.convert(nbformat.from_dict(json.loads(json.dumps(release))), 3))
    nb, _ = rebuild(v3.encode(), release)
    assert _ids(nb) == _ids(release)


def test_feedback_safe_removes_hidden_tests_and_their_traceback_lines(release):
    source = source_notebook()
    graded = copy.deepcopy(source)
    cell = graded.cells[3]
    cell.outputs = [
        nbformat.v4.new_output(
            "error",
            ename="CheckFailed",
            evalue="double_hidden: 1 of 2 cases failed",
            traceback=["---", "hidden_check('double_hidden', double)", "File engine.py"],
        )
    ]
    safe = feedback_safe(graded, source, release)
    text = json.dumps(safe)
    assert "hidden_check" not in text and "fx_hidden" not in text and "HIDDEN" not in text
    assert safe.cells[3].outputs[0].traceback == ["CheckFailed: double_hidden: 1 of 2 cases failed"]
    assert "check('double', double)" in safe.cells[3].source


# ------------------------------------------------------------------ generated edits of an answered
# notebook
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

ANSWERS = {
    "double": "def double(x):\n    return 2 * x\n",
    "square": "def square(x):\n    return x ** 2\n",
    "a_why": "Because 2x = x + x.",
}


@st.composite
def _edited(draw, release):
    """An answered notebook a student reworked: answers moved anywhere, cells added and deleted, ids
    kept or not."""
    cells = _answered(release)["cells"]
    cells[8]["source"] = ANSWERS["a_why"]
    answers = [c for c in cells if nbg(c).get("grade_id") in ANSWERS]
    rest = [c for c in cells if c not in answers]
    # may delete tests
    keep_rest = [c for c in rest if draw(st.booleans()) or nbg(c).get("locked") is None]
    helpers = [
        {
            "cell_type": t,
            "metadata": {},
            "outputs": [],
            "execution_count": None,
            "id": f"mine-{k}",
            "source": f"def helper_{k}(y):\n    return y + {k}\n"
            if t == "code"
            else f"My note {k}: *why* it works.",
        }
        for k, t in enumerate(draw(st.lists(st.sampled_from(["code", "markdown"]), max_size=4)))
    ]
    for h in helpers:
        if h["cell_type"] == "markdown":
            h.pop("outputs"), h.pop("execution_count")
    order = draw(st.permutations(keep_rest + helpers + answers))
    strip = draw(st.booleans())
    out = []
    for n, c in enumerate(order):
        c = copy.deepcopy(c)
        if strip:  # as Colab leaves it: no nbgrader metadata, new ids
            c["metadata"], c["id"] = {}, f"colab-{n}"
        out.append(c)
    return {**_answered(release), "cells": out}, helpers, strip


@settings(max_examples=150, deadline=None, derandomize=True)
@given(data=st.data())
def test_moved_answers_keep_their_code_and_added_cells_are_never_overwritten(data):
    """Guarantee: an answer cell the student moved anywhere keeps their code (by its id; without
    ids, as Colab leaves a notebook, by the names it defines), never the stub put back after it; a
    cell the student added is never replaced by a release cell; the student's order is kept. (A red
    team's honest student who moved an answer got 18/26 with an empty detail before.)"""
    rel = source_notebook()
    for cell in rel.cells:
        if nbg(cell).get("solution") and cell.cell_type == "code":
            cell.source = (
                cell.source.split("### BEGIN SOLUTION")[0]
                + "    # YOUR CODE HERE\n    raise NotImplementedError()"
            )
        if nbg(cell).get("grade") and not nbg(cell).get("solution"):
            cell.source = cell.source.split("### BEGIN HIDDEN TESTS")[0]
    sub, helpers, stripped = data.draw(_edited(rel))
    nb, notes = rebuild(json.dumps(sub).encode(), rel)
    gids = [g for g in _ids(nb) if g]
    assert sorted(gids) == sorted(g for g in _ids(rel) if g)  # every graded cell exactly once
    by_id = {nbg(c)["grade_id"]: c for c in nb.cells if nbg(c).get("grade_id")}
    for gid, text in ANSWERS.items():
        if gid == "a_why" and stripped:
            # prose without ids or metadata, moved among notes of the student's: nothing tells which
            # it is
            continue
        # the student's answer, never the stub put back
        assert by_id[gid].source == text, (gid, notes)
    sources = [c.source for c in nb.cells]
    for h in helpers:
        # a cell the student added is never replaced by a release cell
        assert h["source"] in sources
    # the student's order is kept: their cells appear in the order they put them
    mine = [
        c["source"]
        for c in sub["cells"]
        if c["source"] in set(ANSWERS.values()) | {h["source"] for h in helpers}
    ]
    assert [s for s in sources if s in mine] == mine


def test_answers_written_in_one_cell_are_not_replaced_by_stubs_put_back(release):
    """A blind class's student wrote double and square in one cell and deleted the square cell: the
    stub put back after it replaced their square (4/20 on 02). An answer cell whose functions
    another cell defines stays out; one whose functions nobody defines is put back."""
    sub = _answered(release)
    sub["cells"][2]["source"] = (
        "def double(x):\n    return 2 * x\n\ndef square(x):\n    return x ** 2\n"
    )
    del sub["cells"][5]
    nb, notes = rebuild(json.dumps(sub).encode(), release)
    # no square stub after their cell
    assert [c.source for c in nb.cells].count(release.cells[5].source) == 0
    assert any("square is defined in another of your cells" in n for n in notes), notes
    assert [g for g in _ids(nb) if g] == [g for g in _ids(release) if g and g != "square"]
    sub = _answered(release)
    del sub["cells"][5]
    nb, _ = rebuild(json.dumps(sub).encode(), release)
    assert (
        nbg(nb.cells[5]).get("grade_id") == "square" and "NotImplementedError" in nb.cells[5].source
    )


@pytest.mark.parametrize("strip_ids", [False, True])
def test_an_answer_cell_turned_raw_or_markdown_is_still_graded_as_code(release, strip_ids):
    """One key press in Jupyter turns an answer into a raw or markdown cell; the whole answer was
    then lost without a word. It is graded as code, and the row says so."""
    sub = _answered(release)
    sub["cells"][2]["cell_type"] = "raw"
    sub["cells"][5]["cell_type"] = "markdown"
    for c in sub["cells"]:
        c.pop("outputs", None), c.pop("execution_count", None)
        if strip_ids:
            c["metadata"] = {}
            c["id"] = "x" + c["id"]
    nb, notes = rebuild(json.dumps(sub).encode(), release)
    assert [c.cell_type for c in nb.cells] == [c.cell_type for c in release.cells]
    assert nb.cells[2].source.endswith("return 2 * x\n") and nb.cells[5].source.endswith(
        "return x ** 2\n"
    )
    assert any("'double' was a raw cell: graded as code" in n for n in notes), notes


def test_code_typed_into_a_locked_test_cell_is_named_when_the_cell_is_restored(release):
    sub = _answered(release)
    test = next(
        i
        for i, c in enumerate(release.cells)
        if nbg(c).get("grade") and not nbg(c).get("solution") and c.cell_type == "code"
    )
    sub["cells"][test]["source"] = "def helper():\n    return 1\n" + sub["cells"][test]["source"]
    nb, notes = rebuild(json.dumps(sub).encode(), release)
    assert nb.cells[test].source == release.cells[test].source
    assert any("was edited: restored as released" in n for n in notes), notes
    _, untouched = rebuild(json.dumps(_answered(release)).encode(), release)
    assert not any("restored as released" in n for n in untouched)


def test_a_byte_order_mark_before_the_json_is_read_as_the_same_notebook():
    """A notebook saved with a UTF-8 byte-order mark (as some Windows editors write) was refused as
    invalid_notebook, the student's work lost. RFC 8259 lets a parser ignore it; the cells are the
    same."""
    from autograde.inside.sanitize import parse_submission

    raw = json.dumps(
        {
            "nbformat": 4,
            "nbformat_minor": 5,
            "metadata": {},
            "cells": [
                {
                    "cell_type": "code",
                    "source": "x = 1\n",
                    "metadata": {},
                    "outputs": [],
                    "execution_count": None,
                    "id": "a",
                }
            ],
        }
    ).encode()
    assert parse_submission(b"\xef\xbb\xbf" + raw) == parse_submission(raw)
    assert parse_submission(raw)[0]["source"] == "x = 1\n"
