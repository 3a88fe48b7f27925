"""What of a solution notebook makes `grade` regrade everyone (issue 34: one word changed in a markdown cell
regraded every student of the assignment, 90 s for three): code, nbgrader metadata, tags and cell order do;
the prose of markdown cells and the code of demonstrations (which the verification does not run) do not. Exact comparisons on the course's own notebooks; no grading run."""

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
    return next(c for c in cells if (c["metadata"].get("nbgrader") or {}).get("points") and c["cell_type"] == "code")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.parent.name)
def test_a_word_of_prose_keeps_the_grading_part_and_code_points_and_order_change_it(path):
    text = path.read_text()
    base = grading_part(text)
    prose = _edit(text, lambda cells: _first(cells, "markdown").update(
        source="".join(_first(cells, "markdown")["source"]).replace(" ", "  ", 1) + " typo fixed"))
    assert prose != text and grading_part(prose) == base
    demo = _edit(text, lambda cells: _demo(cells).update(source="".join(_demo(cells)["source"]) + "\nprint('more')"))
    assert demo != text and grading_part(demo) == base
    code = _edit(text, lambda cells: _graded(cells).update(source="".join(_graded(cells)["source"]) + "\n"))
    points = _edit(text, lambda cells: _graded(cells)["metadata"]["nbgrader"].update(
        points=_graded(cells)["metadata"]["nbgrader"]["points"] + 1))
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
