"""A student's markdown and raw cells are inert text in every page a person opens (formgrader,
feedback).

Guarantee (docs/threat-model.md, "markup injection"): whatever a student types in a markdown or raw
cell, the page nbconvert renders from the harness's copy holds exactly the elements it holds for a
plain word, and the student's text comes back character for character as text. Checked with
nbgrader's own templates (formgrader's manual-grading page, the feedback page) on generated text
built from the pieces attacks are made of (tags, event handlers, closing tags, entities, link and
image syntax of every scheme, ``attachment:``, math, blank lines), and against a parser that is not
the renderer (Python's html.parser). The end-to-end proof in a real browser is
test_grade.py::test_formgrader_page_runs_no_student_markup.
"""

from __future__ import annotations

from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_raw_cell

from autograde.inside.sanitize import inert_markdown, inert_student_cells

PIECES = [
    '<img src=x onerror="window.p=1">',
    "<script>window.p=1</script>",
    "</pre>",
    "<pre>",
    "</div>",
    "<svg/onload=window.p=1>",
    "<a href='javascript:window.p=1'>x</a>",
    "[a](javascript:window.p=1)",
    "![b](attachment:nope.png)",
    "![c](data:text/html,<script>1</script>)",
    "&lt;",
    "&#60;script&#62;",
    "&amp;",
    "&",
    "<",
    ">",
    '"',
    "'",
    "`",
    "$x<y$",
    "$$\\href{javascript:1}{x}$$",
    "\n",
    "\n\n",
    "    ",
    "\t",
    "<!--",
    "-->",
    "<![CDATA[",
    "]]>",
    "<style>*{}</style>",
    "<iframe src=//e>",
    "\\",
    "*",
    "_",
    "#",
    '<pre class="student-markdown">',
    "<PRE",
    "\u2028",
    "\r\n",
    "\x00",
    "é",
    "😀",
]
TEXT = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=8)), max_size=12).map("".join)


class _Elements(HTMLParser):
    """Start tags with their attributes, and the text inside ``<pre class="student-markdown">``."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: Counter = Counter()
        self.inert: list[str] = []
        self._in = 0

    def handle_starttag(self, tag, attrs):
        self.tags[(tag, tuple(sorted(attrs)))] += 1
        if tag == "pre" and ("class", "student-markdown") in attrs:
            self._in, self.inert = 1, self.inert + [""]
        elif self._in:
            self._in += 1

    def handle_endtag(self, tag):
        if self._in:
            self._in -= 1

    def handle_data(self, data):
        if self._in:
            self.inert[-1] += data


@pytest.fixture(scope="module")
def exporters():
    """nbconvert exporters with nbgrader's formgrade template (the manual-grading page) and feedback
    template."""
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers
    from traitlets.config import Config

    templates = Path(handlers.template_path)
    out = {}
    c = Config()
    c.HTMLExporter.template_name = "formgrade"
    c.HTMLExporter.extra_template_basedirs = [str(templates)]
    out["formgrade"] = HTMLExporter(config=c)
    c = Config()  # as nbgrader's GenerateFeedback sets it up
    c.HTMLExporter.template_name = "feedback"
    c.HTMLExporter.extra_template_basedirs = [str(templates)]
    c.HTMLExporter.extra_template_paths = [
        str(templates.parent / "static" / "node_modules" / "bootstrap" / "dist" / "css")
    ]
    out["feedback"] = HTMLExporter(config=c)
    return out


RESOURCES = {
    "assignment_id": "a",
    "notebook_id": "n",
    "submission_id": "s",
    "index": 0,
    "total": 1,
    "base_url": "",
    "student": "st",
    "last_name": "",
    "first_name": "",
    "notebook_path": "x",
    "nbgrader": {
        "notebook": "n",
        "score": 0,
        "max_score": 1,
        "late_penalty": 0,
        "student": "st",
        "assignment": "a",
        "timestamp": "t",
    },
}


def _page(exporter, text: str, cell_type: str) -> _Elements:
    make = {"markdown": new_markdown_cell, "raw": new_raw_cell}[cell_type]
    nb = new_notebook(cells=[new_code_cell("x = 1"), make(text)])
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"c{i}"  # fixed: the pages are compared element by element
    html, _ = exporter.from_notebook_node(inert_student_cells(nb), resources=dict(RESOURCES))
    parser = _Elements()
    parser.feed(html)
    parser.close()
    return parser


@pytest.mark.parametrize("template", ["formgrade", "feedback"])
@settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(text=TEXT, cell_type=st.sampled_from(["markdown", "raw"]))
def test_student_text_adds_no_element_and_reads_back_exactly(exporters, template, text, cell_type):
    baseline = _page(exporters[template], "word", "markdown")
    page = _page(exporters[template], text, cell_type)
    assert page.tags == baseline.tags, f"new elements: {page.tags - baseline.tags}"
    # the text as typed (html.parser, like a browser, normalises \r\n and \r to \n; NUL is not text
    # in HTML)
    typed = text.replace("\r\n", "\n").replace("\r", "\n")
    assert [t.replace("\x00", "\ufffd") for t in page.inert] == [typed.replace("\x00", "\ufffd")]


def test_inert_markdown_is_idempotent_and_a_typed_lookalike_stays_inert():
    once = inert_markdown("<b>x</b>")
    assert inert_markdown(once) == once
    lookalike = '<pre class="student-markdown">&lt;img src=x onerror=1&gt;</pre>'
    # already text: escaping again would show entities
    assert inert_markdown(lookalike) == lookalike
    assert (
        inert_markdown('<pre class="student-markdown"><img src=x onerror=1></pre>').count("<") == 2
    )


def test_locked_release_text_is_kept_and_answers_keep_their_grading_metadata():
    meta_locked = {"nbgrader": {"grade_id": "q", "locked": True, "grade": False, "solution": False}}
    meta_answer = {
        "nbgrader": {
            "grade_id": "a",
            "locked": False,
            "grade": True,
            "solution": True,
            "points": 1,
        },
        "autograde": {"rubric": "a"},
        "tags": ["x"],
    }
    raw = new_raw_cell("<b>raw</b>", metadata={"format": "text/html"})
    nb = new_notebook(
        cells=[
            new_markdown_cell("**Question**", metadata=meta_locked),
            new_markdown_cell("<b>answer</b>", metadata=meta_answer),
            raw,
        ]
    )
    out = inert_student_cells(nb)
    assert out.cells[0].source == "**Question**"
    assert out.cells[1].source == inert_markdown("<b>answer</b>")
    # formgrader still grades it
    assert out.cells[1].metadata == {"nbgrader": meta_answer["nbgrader"]}
    assert out.cells[2].cell_type == "markdown" and out.cells[2].metadata == {}
    assert nb.cells[1].source == "<b>answer</b>"  # the input is not changed
    # the release's own (unlocked) text, left as it was, is the instructor's: rendered as written
    release = new_notebook(cells=[new_markdown_cell("<b>answer</b>"), new_markdown_cell("# Intro")])
    kept = inert_student_cells(
        new_notebook(cells=[new_markdown_cell("# Intro"), new_markdown_cell("# Intro!")]), release
    )
    assert [c.source for c in kept.cells] == ["# Intro", inert_markdown("# Intro!")]
