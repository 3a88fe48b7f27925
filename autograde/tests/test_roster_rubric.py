"""Graders' view: students by name from a roster; each written answer's rubric beside it, never for
students.

The rubric tests use the committed 02 notebooks (the student version stands in for an autograded
notebook: same cells and metadata) and render them with formgrader's own template, as its
manual-grading page does. Cost: ~3 s.
"""

from __future__ import annotations

import os

import nbformat
import pytest

from autograde.course import REPO, tools_beside_python
from autograde.gradebook import import_roster, read_roster
from autograde.rubric import is_rubric, rubric_lines, strip_rubrics, with_rubrics

A = "02_logits_softmax"
HAVE_02 = (REPO / "solutions" / A / f"{A}.ipynb").exists()


def _write(path, text: str):
    path.write_text(text, encoding="utf-8")
    return path


def test_roster_names_reach_the_gradebook(tmp_path):
    from nbgrader.api import Gradebook

    tools_beside_python()  # nbgrader runs `alembic` by name

    roster = _write(
        tmp_path / "roster.csv",
        "\ufeffid,first,last,email,section\n"
        's1,Ada,Lovelace,ada@example.org,A\ns2,"Grace, Jr.",Hopper,grace@example.org,B\n',
    )
    out = tmp_path / "out"
    assert import_roster(out, roster) == 2
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        students = {s.id: (s.first_name, s.last_name, s.email) for s in gb.students}
    assert students == {
        "s1": ("Ada", "Lovelace", "ada@example.org"),
        "s2": ("Grace, Jr.", "Hopper", "grace@example.org"),
    }
    # kept beside the gradebook, so every later merge applies it again
    assert read_roster(out / "roster.csv") == [
        {"id": "s1", "first": "Ada", "last": "Lovelace", "email": "ada@example.org"},
        {"id": "s2", "first": "Grace, Jr.", "last": "Hopper", "email": "grace@example.org"},
    ]


@pytest.mark.parametrize(
    "text, message",
    [
        ("id,first,last\ns1,A,B\n", "missing email"),
        ("id,first,last,email\ns1,A,B,a@x\ns1,C,D,c@x\n", "appears twice"),
        ("id,first,last,email\n../x,A,B,a@x\n", "folder name"),
        ("id,first,last,email\n,A,B,a@x\n", "empty id"),
        ("id,first,last,email\n<img src=x onerror=1>,A,B,a@x\n", "not a student id"),
        ("id,first,last,email\ns1 x,A,B,a@x\n", "not a student id"),
    ],
)
def test_malformed_roster_is_refused(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        read_roster(_write(tmp_path / "r.csv", text))


def test_roster_names_are_plain_text_for_formgrader(tmp_path):
    """formgrader prints roster names unescaped; a second blind red team ran script from a display
    name."""
    rows = read_roster(
        _write(
            tmp_path / "r.csv",
            'id,first,last,email\ns1,"<img src=x onerror=""window.x=1"">",O\'Brien & Co,a@x"><b>\n',
        )
    )
    assert rows == [
        {
            "id": "s1",
            "first": "img src=x onerror=window.x=1",
            "last": "O'Brien  Co",
            "email": "a@xb",
        }
    ]


def _notebooks():
    src = nbformat.read(str(REPO / "solutions" / A / f"{A}.ipynb"), as_version=4)
    stu = nbformat.read(str(REPO / "notebooks" / A / f"{A}.ipynb"), as_version=4)
    return src, stu


def _hand_graded(nb) -> list[str]:
    """grade_ids of answers graded by hand, read directly from the metadata."""
    return [
        c.metadata["nbgrader"]["grade_id"]
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("grade")
        and c.metadata["nbgrader"].get("solution")
        and c.cell_type == "markdown"
    ]


@pytest.mark.skipif(not HAVE_02, reason="no 02 instructor notebook")
def test_each_written_answer_is_followed_by_its_rubric():
    src, stu = _notebooks()
    ids = _hand_graded(src)
    assert ids, "02 has written answers"
    nb = with_rubrics(stu, src)
    assert len(nb.cells) == len(stu.cells) + len(ids)
    by_id = {
        c.metadata["nbgrader"]["grade_id"]: c.source
        for c in src.cells
        if c.metadata.get("nbgrader", {}).get("grade_id")
    }
    for i, cell in enumerate(nb.cells):
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid in ids:
            rubric = nb.cells[i + 1]
            # not a graded cell: scores unchanged
            assert is_rubric(rubric) and "nbgrader" not in rubric.metadata
            for line in by_id[gid].splitlines():
                if line.strip():
                    assert line in rubric.source
    assert any("Marking:" in c.source for c in nb.cells if is_rubric(c))
    assert with_rubrics(nb, src) == nb  # idempotent
    # a student page made from it can drop them exactly
    assert strip_rubrics(nb) == stu
    nbformat.validate(nb)


@pytest.mark.skipif(not HAVE_02, reason="no 02 instructor notebook")
def test_formgrader_page_shows_the_rubric_after_the_answer():
    from nbconvert import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers

    src, stu = _notebooks()
    nb = with_rubrics(stu, src)
    exporter = HTMLExporter(
        template_name="formgrade", extra_template_basedirs=[handlers.template_path]
    )
    html, _ = exporter.from_notebook_node(
        nb, resources={"base_url": "/", "notebook_id": A, "index": 0, "total": 1}
    )
    for gid in _hand_graded(src):
        box = html.index(f'id="{gid}"')  # the score box of the answer
        rubric = html.index(f"<code>{gid}</code>", box)  # the rubric heading names the answer
        # no other answer in between
        assert html.find('class="score tabbable"', box + 1, rubric) == -1
    assert html.count("Rubric for graders") == len(_hand_graded(src))
    # the plain student notebook carries none of it
    plain, _ = HTMLExporter().from_notebook_node(stu)
    assert not any(line in plain for line in rubric_lines(src) if "Marking" in line)
    assert os.path.isdir(handlers.template_path)


def test_roster_is_applied_again_by_every_merge(fx_course, tmp_path):
    """A gradebook rebuilt by `grade` (here: deleted, then merged again) gets the names back from
    OUT/roster.csv."""
    from types import SimpleNamespace

    from nbgrader.api import Gradebook

    from autograde.gradebook import merge_gradebooks

    tools_beside_python()
    out = tmp_path / "out"
    import_roster(
        out, _write(tmp_path / "r.csv", "id,first,last,email\ns1,Ada,Lovelace,ada@example.org\n")
    )
    (out / "gradebook.db").unlink()
    merge_gradebooks(
        SimpleNamespace(out=out, course=fx_course), [{"student": "s1", "assignment": "fx"}]
    )
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        s = gb.find_student("s1")
        assert (s.first_name, s.last_name, s.email) == ("Ada", "Lovelace", "ada@example.org")
