"""What of a solution notebook makes `grade` regrade everyone (issue 34: one word changed in a
markdown cell regraded every student of the assignment, 90 s for three): code, nbgrader metadata,
tags and cell order do; the prose of markdown cells and the code of demonstrations (which the
verification does not run) do not. Exact comparisons on the course's own notebooks; no grading
run."""

from __future__ import annotations

import copy
import json

import pytest

from autograde.course import REPO
from autograde.grade import grading_part

NOTEBOOKS = sorted((REPO / "solutions").glob("*/*.ipynb"))


def _edit(text: str, change) -> str:
    nb = json.loads(text)
    change(nb["cells"])
    return json.dumps(nb)


def _first(cells, kind):
    return next(c for c in cells if c["cell_type"] == kind)


def _demo(cells):
    return next(c for c in cells if "demo" in c["metadata"].get("tags", []))


def _graded(cells):
    return next(
        c
        for c in cells
        if (c["metadata"].get("nbgrader") or {}).get("points") and c["cell_type"] == "code"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.parent.name)
def test_a_word_of_prose_keeps_the_grading_part_and_code_points_and_order_change_it(path):
    text = path.read_text()
    base = grading_part(text)
    prose = _edit(
        text,
        lambda cells: _first(cells, "markdown").update(
            source="".join(_first(cells, "markdown")["source"]).replace(" ", "  ", 1)
            + " typo fixed"
        ),
    )
    assert prose != text and grading_part(prose) == base
    demo = _edit(
        text,
        lambda cells: _demo(cells).update(
            source="".join(_demo(cells)["source"]) + "\nprint('more')"
        ),
    )
    assert demo != text and grading_part(demo) == base
    code = _edit(
        text, lambda cells: _graded(cells).update(source="".join(_graded(cells)["source"]) + "\n")
    )
    points = _edit(
        text,
        lambda cells: _graded(cells)["metadata"]["nbgrader"].update(
            points=_graded(cells)["metadata"]["nbgrader"]["points"] + 1
        ),
    )
    order = _edit(text, lambda cells: cells.reverse())
    tags = _edit(text, lambda cells: _first(cells, "code")["metadata"].update(tags=["a-new-tag"]))
    for changed in (code, points, order, tags):
        assert grading_part(changed) != base


def test_the_grading_part_reads_plain_json_with_sources_as_lists_or_strings():
    nb = json.loads(NOTEBOOKS[0].read_text())
    joined = copy.deepcopy(nb)
    for c in joined["cells"]:
        c["source"] = "".join(c["source"])
    assert grading_part(json.dumps(nb)) == grading_part(json.dumps(joined))


def test_an_edit_to_one_assignments_checks_changes_only_that_assignments_fingerprint(monkeypatch):
    """Issue 34, item 6: a change to 03's hidden checks regraded every student of every assignment
    (the code fingerprint covered every check module). A check module that names its assignment
    (``ASSIGNMENT = "..."``) now counts only for that one; the engine, the harness and a module that
    names none count for all. Truth: the same course copied, one module's text changed, the
    fingerprints compared."""
    from pathlib import Path

    from autograde.course import Course
    from autograde.grade import _code_fingerprint

    course = Course()
    before = {a: _code_fingerprint(course, a) for a in ("02_logits_softmax", "03_sampling")}
    real = Path.read_bytes
    for edited, changes in (
        (REPO / "autograde" / "hidden" / "sampling.py", {"03_sampling"}),
        (REPO / "autograde" / "hidden" / "_twins.py", {"02_logits_softmax", "03_sampling"}),
    ):
        # the file as if edited (its text plus a comment), read by the fingerprint only: nothing is
        # written
        monkeypatch.setattr(
            Path,
            "read_bytes",
            lambda self, e=edited: real(self) + (b"\n# an edit\n" if self == e else b""),
        )
        after = {a: _code_fingerprint(course, a) for a in before}
        monkeypatch.setattr(Path, "read_bytes", real)
        assert {a for a in before if after[a] != before[a]} == changes, edited.name
    assert {a: _code_fingerprint(course, a) for a in before} == before
