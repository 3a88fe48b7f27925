"""Every notebook states its point totals, and they are what nbgrader will grade: the opening's
"Autograded: A points; written answers: W points" equals the sum of the graded cells' points, and
the exercises' headings "(n points)" add up to the autograded total."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "solutions").glob("0*/0*.ipynb"))


def _points(nb, kind: str) -> float:
    return sum(
        c.metadata.get("nbgrader", {}).get("points", 0)
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("grade") and c.cell_type == kind
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_opening_states_the_totals_nbgrader_grades(path):
    nb = nbformat.read(path, as_version=4)
    found = [
        m
        for c in nb.cells[:3]
        if c.cell_type == "markdown"
        for m in re.finditer(r"Autograded: (\d+) points; written answers: (\d+)\s+points", c.source)
    ]
    assert len(found) == 1, (
        "the opening must state 'Autograded: A points; written answers: W points' once"
    )
    auto, written = (int(g) for g in found[0].groups())
    assert (auto, written) == (_points(nb, "code"), _points(nb, "markdown"))
    headings = [
        int(m.group(1))
        for c in nb.cells
        if c.cell_type == "markdown"
        for m in re.finditer(r"### Exercise [^\n]*?\((\d+) points?\)", c.source)
    ]
    assert sum(headings) == auto, (
        f"exercise headings add up to {sum(headings)}, the test cells to {auto}"
    )
