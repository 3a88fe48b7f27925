"""Rubrics beside written answers, for graders only.

A hand-graded answer's model answer and marking scheme ("*Marking: ...*") live in the instructor
notebook's answer cell (``solutions/``), the one cell a student never sees. ``with_rubrics`` copies
that text into the autograded notebook, as a markdown cell right after the student's answer, which
is where formgrader's manual-grading page shows it. Rubric cells are marked in their metadata
(``autograde.rubric``): whatever makes a page for a student must drop them first (``strip_rubrics``)
or refuse to quote them (``rubric_lines``), as it does for hidden tests.
"""

from __future__ import annotations

import copy

import nbformat
from nbformat.v4 import new_markdown_cell

from autograde.course import is_autograded_test, is_grade, is_solution, nbg

KEY = "autograde"
HEADING = "**Rubric for graders** (from the instructor notebook; never shown to students)"


def is_rubric(cell) -> bool:
    """Whether a cell is a rubric inserted by ``with_rubrics``."""
    return bool(cell.get("metadata", {}).get(KEY, {}).get("rubric"))


def rubrics(source_nb) -> dict[str, str]:
    """grade_id -> the instructor's text of every answer graded by hand (a graded cell with a
    solution)."""
    return {
        nbg(c)["grade_id"]: c.source
        for c in source_nb.cells
        if is_grade(c) and is_solution(c) and not is_autograded_test(c) and c.source.strip()
    }


def rubric_cell(grade_id: str, points, text: str):
    """The markdown cell that shows one answer's rubric."""
    quoted = "\n".join("> " + line if line.strip() else ">" for line in text.splitlines())
    cell = new_markdown_cell(f"{HEADING} — `{grade_id}`, {points} point(s):\n\n{quoted}")
    cell.metadata[KEY] = {"rubric": grade_id}
    # nbformat 4.5 ids are random; the caller's notebook may be an older minor version
    cell.pop("id", None)
    return cell


def strip_rubrics(nb):
    """A copy of ``nb`` without rubric cells."""
    out = copy.deepcopy(nb)
    out.cells = [c for c in out.cells if not is_rubric(c)]
    return out


def with_rubrics(autograded_nb, source_nb):
    """A copy of the autograded notebook with each hand-graded answer followed by its rubric from
    ``source_nb``.

    Answers are matched by grade_id; rubric cells already present are replaced, so calling it again
    on its own output changes nothing.
    """
    texts = rubrics(source_nb)
    points = {nbg(c)["grade_id"]: nbg(c).get("points", 0) for c in source_nb.cells if is_grade(c)}
    out = strip_rubrics(autograded_nb)
    cells = []
    for cell in out.cells:
        cells.append(cell)
        gid = nbg(cell).get("grade_id")
        if gid in texts and is_solution(cell):
            rc = rubric_cell(gid, points.get(gid, 0), texts[gid])
            if out.nbformat_minor >= 5:
                rc["id"] = f"rubric-{gid}"[:64]
            cells.append(rc)
    out.cells = cells
    nbformat.validate(out)
    return out


def rubric_lines(source_nb) -> list[str]:
    """Non-trivial lines of every rubric (a student page quoting one leaks the model answer)."""
    return [
        ln.strip()
        for text in rubrics(source_nb).values()
        for ln in text.splitlines()
        if len(ln.strip()) > 8
    ]
