"""Similarity between submissions: pairs whose answer cells are unusually alike, for an instructor
to read.

A report, never a penalty: nothing here touches a grade. Each student's answer cells of an
assignment (the code cells nbgrader marks ``solution``; all code cells of a notebook whose metadata
was stripped) are joined into one text and compared with every classmate's by copydetect 0.5.0
(Stanford MOSS's winnowing: pygments tokens with names made V/F/O and strings S, k-gram
fingerprints, so renamed variables and reordered lines still match). What the class was given is
boilerplate and never counts as shared: the released notebook's code (signatures, docstrings, stubs)
and the reference solution of every answer cell (an honest student may well write it nearly as the
instructor did). Pairs are ranked as copydetect's own report ranks them: by the larger of the two
shares of each text found in the other; both shares and the overlapping tokens are shown, with the
shared code marked in both answers.

Sources: ``OUT`` (reads OUT/autograded/<student>/<assignment>/<notebook>.ipynb, the rebuilt
notebooks `grade` wrote) or a submissions folder ``<student>/<assignment>/*.ipynb``. Notebooks are
read as data (size limit, no links).
"""

from __future__ import annotations

import html
import io
import json
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

from autograde.course import Course, write_atomic
from autograde.spreadsheet import csv_text

# copydetect's defaults (copydetect/defaults.py): matches shorter than this are noise,
NOISE_T = 25
GUARANTEE_T = 25  # matches this long are always found (window size = GUARANTEE_T - NOISE_T + 1)
NOTEBOOK_LIMIT = 32 << 20
# joins cells: 32 characters of tokens copydetect keeps, so no k-gram (k = NOISE_T) spans two cells.
# Every fingerprint then lies within one cell plus separator, and a stub cell's fingerprints are the
# same in a student's text as in the boilerplate, whatever cells stand around it
SEPARATOR = "\n" + "pass\n" * 8
FIELDS = [
    "assignment",
    "student_a",
    "student_b",
    "similarity",
    "share_of_a",
    "share_of_b",
    "shared_tokens",
]


@dataclass
class Pair:
    """Two students' answers to one assignment and how much of each copydetect found in the
    other."""

    assignment: str
    a: str
    b: str
    share_a: float
    share_b: float
    tokens: int
    slices_a: list[tuple[int, int]]
    slices_b: list[tuple[int, int]]

    @property
    def score(self) -> float:
        return max(self.share_a, self.share_b)


def _cells(path: Path) -> list[dict]:
    """A notebook's cells, read as untrusted data (no links followed, size-limited); [] if
    unreadable."""
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > NOTEBOOK_LIMIT:
            return []
        cells = json.loads(path.read_text(encoding="utf-8", errors="replace")).get("cells", [])
    except (OSError, ValueError, AttributeError):
        return []
    return [c for c in cells if isinstance(c, dict)] if isinstance(cells, list) else []


def _source(cell: dict) -> str:
    s = cell.get("source", "")
    return "".join(x for x in s if isinstance(x, str)) if isinstance(s, list) else str(s)


def _nbg(cell: dict) -> dict:
    m = cell.get("metadata", {})
    m = m.get("nbgrader", {}) if isinstance(m, dict) else {}
    return m if isinstance(m, dict) else {}


def answer_text(path: Path) -> str:
    """The code a student wrote in a notebook's answer cells (all code cells where no cell says it
    is one)."""
    code = [c for c in _cells(path) if c.get("cell_type") == "code"]
    answers = [c for c in code if _nbg(c).get("solution") and not _nbg(c).get("grade")]
    return SEPARATOR.join(_source(c) for c in (answers or code))


def boilerplate_text(course: Course, assignment: str) -> str:
    """The released notebooks' code and the reference solutions' answer cells: what no student owes
    anyone."""
    parts = []
    for src in course.source_notebooks(assignment):
        parts += [
            _source(c)
            for c in _cells(src)
            if c.get("cell_type") == "code" and _nbg(c).get("solution")
        ]
        parts += [
            _source(c)
            for c in _cells(course.release_notebook(assignment, src.stem))
            if c.get("cell_type") == "code"
        ]
    return SEPARATOR.join(parts)


def _fingerprint(text: str, boilerplate=None, win_size: int = GUARANTEE_T - NOISE_T + 1):
    from copydetect import CodeFingerprint

    # file= only names the language for pygments; the text comes from fp
    return CodeFingerprint(
        "answer.py",
        NOISE_T,
        win_size,
        boilerplate=boilerplate,
        fp=io.StringIO(text),
        language="python",
    )


def find_pairs(answers: dict[str, str], boilerplate: str, assignment: str) -> list[Pair]:
    """Every pair of students with any shared code, most similar first
    (copydetect.compare_files)."""
    import numpy as np
    from copydetect import compare_files

    # boilerplate as copydetect's own CopyDetector takes it: every k-gram (window 1) of the given
    # code
    bp = (
        np.unique(np.array(sorted(_fingerprint(boilerplate, win_size=1).hashes), dtype=np.int64))
        if boilerplate.strip()
        else None
    )
    prints = {s: _fingerprint(text, bp) for s, text in answers.items() if text.strip()}
    pairs = []
    for a, b in combinations(sorted(prints), 2):
        tokens, (sa, sb), (la, lb) = compare_files(prints[a], prints[b])
        if tokens > 0:
            pairs.append(
                Pair(
                    assignment,
                    a,
                    b,
                    float(sa),
                    float(sb),
                    int(tokens),
                    [(int(s), int(e)) for s, e in np.asarray(la).T] if len(la) else [],
                    [(int(s), int(e)) for s, e in np.asarray(lb).T] if len(lb) else [],
                )
            )
    return sorted(pairs, key=lambda p: (-p.score, -p.tokens, p.a, p.b))


def collect(source: Path, assignments: list[str] | None = None) -> dict[str, dict[str, str]]:
    """assignment -> student -> answer text, from OUT/autograded or a submissions folder."""
    source = Path(source)
    root = source / "autograded" if (source / "autograded").is_dir() else source
    found: dict[str, dict[str, str]] = {}
    for student in sorted(
        p for p in root.iterdir() if p.is_dir() and not p.is_symlink() and p.name[:1] != "."
    ):
        for folder in sorted(p for p in student.iterdir() if p.is_dir() and not p.is_symlink()):
            if assignments and folder.name not in assignments:
                continue
            text = SEPARATOR.join(answer_text(nb) for nb in sorted(folder.glob("*.ipynb")))
            found.setdefault(folder.name, {})[student.name] = text
    return found


def _marked(text: str, slices: list[tuple[int, int]]) -> str:
    """``text`` escaped, with the shared stretches in <mark>."""
    out, pos = [], 0
    for start, end in sorted(slices):
        start = max(start, pos)
        if end <= start:
            continue
        out += [html.escape(text[pos:start]), "<mark>", html.escape(text[start:end]), "</mark>"]
        pos = end
    out.append(html.escape(text[pos:]))
    return "".join(out)


def render_html(pairs: list[Pair], answers: dict[str, dict[str, str]], top: int) -> str:
    """The page an instructor reads: per assignment the top pairs, shared code marked; all strings
    escaped."""
    e = html.escape
    body = [
        "<h1>Similar answers</h1><p>Pairs of students whose answer cells share code that was not "
        "given to the "
        "class (released notebook and reference solution excluded), found by copydetect. Similar "
        "is not "
        "copied: read the two answers before drawing any conclusion. No grade is changed by this "
        "report.</p>"
    ]
    for assignment in sorted({p.assignment for p in pairs} | set(answers)):
        mine = [p for p in pairs if p.assignment == assignment][:top]
        body.append(
            f"<h2>{e(assignment)}</h2><p>{len(answers.get(assignment, {}))} student(s); "
            f"{len(mine)} pair(s) with shared code listed.</p>"
        )
        for p in mine:
            texts = answers[assignment]
            body.append(
                f"<details><summary>{e(p.a)} &amp; {e(p.b)}: {p.score:.0%} (of {e(p.a)}: "
                f"{p.share_a:.0%}, "
                f"of {e(p.b)}: {p.share_b:.0%}; {p.tokens} shared tokens)</summary><table><tr>"
                f"<th>{e(p.a)}</th><th>{e(p.b)}</th></tr><tr>"
                f"<td><pre>{_marked(texts[p.a], p.slices_a)}</pre></td>"
                f"<td><pre>{_marked(texts[p.b], p.slices_b)}</pre></td></tr></table></details>"
            )
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Similar answers</title><style>"
        "body{font-family:sans-serif}td{vertical-align:top;border:1px solid "
        "#ccc}mark{background:#ffe082}"
        "</style></head><body>" + "".join(body) + "</body></html>"
    )


def write_similarity(
    source: Path,
    dest: Path,
    assignments: list[str] | None = None,
    top: int = 50,
    course: Course | None = None,
    log=print,
) -> list[Path]:
    """Write similarity.csv (every pair with shared code) and similarity.html (the top pairs) into
    DEST."""
    from autograde.course import shown

    course = course or Course()
    answers = collect(source, assignments)
    pairs = []
    for assignment, by_student in sorted(answers.items()):
        if not course.source_notebooks(assignment):
            log(
                shown(
                    f"{assignment}: not an assignment of {course.root} (--root): the given code "
                    "and the reference solution cannot be excluded, so they count as shared"
                )
            )
        pairs += find_pairs(by_student, boilerplate_text(course, assignment), assignment)
    rows = [
        [p.assignment, p.a, p.b, f"{p.score:.3f}", f"{p.share_a:.3f}", f"{p.share_b:.3f}", p.tokens]
        for p in pairs
    ]
    dest = Path(dest)
    write_atomic(dest / "similarity.csv", csv_text(FIELDS, rows))
    write_atomic(dest / "similarity.html", render_html(pairs, answers, top))
    return [dest / "similarity.csv", dest / "similarity.html"]
