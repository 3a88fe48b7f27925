"""Before grading: read a submission leniently and rebuild its nbgrader metadata from the release
notebook. After grading: make a feedback-safe copy (no hidden test source, no hidden lines in
tracebacks), and make the student's own markdown and raw cells inert text in every notebook or page
a person opens (``inert_student_cells``).

Students' editors drop, duplicate or rewrite cell metadata (Colab round-trips strip
``metadata.nbgrader``), so the submission's own nbgrader metadata and tags are never trusted. Each
release cell is matched to a submission cell by, in order: cell id (wherever the student moved it),
identical content within the gaps between matches, then, for answer cells only, the most similar
cell of the same type in the gap, then anywhere. Test and other locked cells are never matched by
similarity. The submission's order is kept. Graded, locked and answer cells the student deleted are
put back (an answer cell as its unanswered stub, only when no cell of the submission could be it).
Cells the student added (helpers, scratch work) are kept, without nbgrader metadata.
"""

from __future__ import annotations

import copy
import difflib
import html
import json
import re
from collections.abc import Iterator

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_raw_cell

from autograde.inside.cells import HIDDEN_BLOCK, hidden_lines, nbg

_VALID_ID = re.compile(r"^[a-zA-Z0-9-_]{1,64}$")
# top-level names an answer cell defines
_DEFINES = re.compile(r"^(?:async\s+)?(?:def|class)\s+(\w+)", re.M)


class InvalidNotebook(ValueError):
    """The submission is not a readable notebook; the message says why."""


def _source(x) -> str:
    if isinstance(x, list) and all(isinstance(s, str) for s in x):
        return "".join(x)
    if isinstance(x, str):
        return x
    raise InvalidNotebook("a cell's source is neither text nor a list of lines")


def parse_submission(raw: bytes) -> list[dict]:
    """Cells of a submitted notebook as plain dicts (type, source, id, metadata); InvalidNotebook if
    unreadable."""
    try:
        # a byte-order mark (Windows editors write one) is no change
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InvalidNotebook(f"not valid JSON: {e}") from None
    if not isinstance(data, dict):
        raise InvalidNotebook("the file is JSON but not a notebook (top level is not an object)")
    major = data.get("nbformat")
    if major != 4:
        try:
            data = json.loads(nbformat.writes(nbformat.reads(json.dumps(data), as_version=4)))
        except Exception as e:  # nbformat raises many kinds; all mean "cannot convert"
            raise InvalidNotebook(f"unsupported notebook format {major!r}: {e}") from None
    cells = data.get("cells")
    if not isinstance(cells, list):
        raise InvalidNotebook("the notebook has no list of cells")
    if not cells:
        raise InvalidNotebook(
            "the notebook has no cells (saved empty?): nothing of the student's to grade"
        )
    out = []
    for i, c in enumerate(cells):
        if not isinstance(c, dict) or c.get("cell_type") not in ("code", "markdown", "raw"):
            raise InvalidNotebook(f"cell {i} is not a code, markdown or raw cell")
        meta = c.get("metadata") if isinstance(c.get("metadata"), dict) else {}
        out.append(
            {
                "cell_type": c["cell_type"],
                "source": _source(c.get("source", "")),
                "id": c.get("id") if isinstance(c.get("id"), str) else None,
                "metadata": meta,
            }
        )
    return out


def _norm(src: str) -> str:
    return "\n".join(line.rstrip() for line in src.strip().splitlines())


def _increasing(match: dict[int, int]) -> list[tuple[int, int]]:
    """The longest run of matches in the same order on both sides (the anchors between which gaps
    are matched)."""
    pairs = sorted(match.items())
    # best[k]: a chain of length k + 1 ending in the smallest j
    best: list[list[tuple[int, int]]] = []
    for pair in pairs:
        k = next((k for k, chain in enumerate(best) if chain[-1][1] >= pair[1]), len(best))
        chain = (best[k - 1] if k else []) + [pair]
        if k == len(best):
            best.append(chain)
        else:
            best[k] = chain
    return best[-1] if best else []


def _retyped(r, c: dict) -> bool:
    """A code answer the student turned into a raw or markdown cell (one key press in Jupyter):
    still the answer."""
    return (
        r.cell_type == "code"
        and bool(nbg(r).get("solution"))
        and c["cell_type"] in ("raw", "markdown")
    )


def _by_id(release: list, sub: list[dict]) -> dict[int, int]:
    """Step 1 of ``_align``: cell ids, unique in the submission and of the same type, wherever the
    student moved the cell."""
    match: dict[int, int] = {}
    sub_ids: dict[str, list[int]] = {}
    for j, c in enumerate(sub):
        if c["id"]:
            sub_ids.setdefault(c["id"], []).append(j)
    for i, r in enumerate(release):
        js = sub_ids.get(r.get("id") or "", [])
        if (
            len(js) == 1
            and (sub[js[0]]["cell_type"] == r.cell_type or _retyped(r, sub[js[0]]))
            and js[0] not in match.values()
        ):
            match[i] = js[0]
    return match


def _gaps(
    release: list, sub: list[dict], match: dict[int, int]
) -> Iterator[tuple[list[int], list[int]]]:
    """(release cells, submission cells) still unmatched between two anchors."""
    used = set(match.values())
    anchors = [(-1, -1)] + _increasing(match) + [(len(release), len(sub))]
    for (i0, j0), (i1, j1) in zip(anchors, anchors[1:]):
        rs = [i for i in range(i0 + 1, i1) if i not in match]
        ss = [j for j in range(j0 + 1, j1) if j not in used]
        if rs and ss:
            yield rs, ss


def _by_content(release: list, sub: list[dict], match: dict[int, int]) -> None:
    """Step 2 of ``_align``: identical content inside each gap, added to MATCH."""
    for rs, ss in list(_gaps(release, sub, match)):
        a = [(release[i].cell_type, _norm(release[i].source)) for i in rs]
        # an instructor notebook's test cell is its release text plus hidden blocks (selfcheck
        # grades it stripped)
        b = [(sub[j]["cell_type"], _norm(HIDDEN_BLOCK.sub("", sub[j]["source"]))) for j in ss]
        for blk in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
            for k in range(blk.size):
                match[rs[blk.a + k]] = ss[blk.b + k]


class _Alike:
    """How alike a release cell and a submission cell are, each pair computed once."""

    def __init__(self, release: list, sub: list[dict]) -> None:
        self.release, self.sub = release, sub
        self.cache: dict[tuple[int, int], tuple[float, float]] = {}

    def like(self, i: int, j: int) -> tuple[float, float]:
        """How alike: the share of names defined in either that both define, then the text's
        similarity."""
        release, sub, cache = self.release, self.sub, self.cache
        if (i, j) not in cache:
            a, b = _DEFINES.findall(release[i].source), _DEFINES.findall(sub[j]["source"])
            shared = len(set(a) & set(b)) / len(set(a) | set(b)) if a or b else 0.0
            cache[i, j] = (
                shared,
                difflib.SequenceMatcher(None, release[i].source, sub[j]["source"]).ratio(),
            )
        return cache[i, j]

    def fits(self, i: int, j: int) -> bool:
        """Same type, and if the release's answer defines names (``def double``), the cell defines
        one of them."""
        release, sub = self.release, self.sub
        if _retyped(release[i], sub[j]):
            return self.like(i, j)[0] > 0
        return sub[j]["cell_type"] == release[i].cell_type and (
            self.like(i, j)[0] > 0 or not _DEFINES.search(release[i].source)
        )


def _answers_in_gaps(
    release: list, sub: list[dict], match: dict[int, int], answers: list[int], alike: _Alike
) -> None:
    """Step 3 of ``_align``: answer cells left, within each gap and in order: the most similar cell
    of the same type (Colab strips ids; a prose answer has nothing else to go by), unless that cell
    is more like another answer (it was moved: step 4). Only answers: a test or other locked cell
    that is missing is put back from the release, and never takes the place of a student's cell
    (whose code it would replace)."""
    like, fits = alike.like, alike.fits
    for rs, ss in list(_gaps(release, sub, match)):
        pos = 0
        for i in rs:
            cands = [j for j in ss[pos:] if fits(i, j)]
            if i not in answers or not cands:
                continue
            best = max(cands, key=lambda j: (like(i, j), -j))
            rivals = [
                k
                for k in answers
                if k not in match and k != i and release[k].cell_type == release[i].cell_type
            ]
            if any(like(k, best) > like(i, best) for k in rivals):
                continue
            match[i] = best
            pos = ss.index(best) + 1


def _moved_answers(
    sub: list[dict], match: dict[int, int], answers: list[int], alike: _Alike
) -> None:
    """Step 4 of ``_align``: answers still unmatched (moved past other cells, ids stripped): the
    most similar cell left anywhere."""
    used = set(match.values())
    pairs = sorted(
        (
            (alike.like(i, j), -j, -i, i, j)
            for i in answers
            if i not in match
            for j in range(len(sub))
            if j not in used and alike.fits(i, j)
        ),
        reverse=True,
    )
    for *_, i, j in pairs:
        if i not in match and j not in used:
            match[i] = j
            used.add(j)


def _align(release: list, sub: list[dict]) -> dict[int, int]:
    """release cell index -> submission cell index (one to one; a moved cell keeps its place in the
    submission), in four steps, each matching only what the ones before left."""
    match = _by_id(release, sub)
    _by_content(release, sub, match)
    alike = _Alike(release, sub)
    answers = [i for i, r in enumerate(release) if nbg(r).get("solution")]
    _answers_in_gaps(release, sub, match, answers, alike)
    _moved_answers(sub, match, answers, alike)
    return match


def rebuild(raw: bytes, release: nbformat.NotebookNode) -> tuple[nbformat.NotebookNode, list[str]]:
    """The submission as a clean v4 notebook whose nbgrader metadata and tags come from ``release``
    only.

    Returns (notebook, notes): notes say what was repaired (for the per-student report).
    """
    sub = parse_submission(raw)
    rel = release.cells
    match = _align(rel, sub)
    by_sub = {j: i for i, j in match.items()}
    notes = []
    changed = [
        i
        for i, r in enumerate(rel)
        if nbg(r) and (i not in match or sub[match[i]]["metadata"].get("nbgrader") != nbg(r))
    ]
    if changed:
        notes.append(
            f"nbgrader metadata missing or changed on {len(changed)} cell(s): rebuilt from the "
            "release"
        )
    # where to re-insert release cells that nbgrader needs but the submission lacks. An answer cell
    # whose functions the student defined in another cell is not put back: its stub would replace
    # their code (a blind class wrote all six answers of 02 in one cell and got 4/20)
    defined = {
        name for c in sub if c["cell_type"] == "code" for name in _DEFINES.findall(c["source"])
    }
    missing_after: dict[int, list[int]] = {}
    prev_j = -1
    for i, r in enumerate(rel):
        if i in match:
            prev_j = match[i]
        elif nbg(r):
            names = set(_DEFINES.findall(r.source)) if r.cell_type == "code" else set()
            if nbg(r).get("solution") and not nbg(r).get("grade") and names and names <= defined:
                notes.append(
                    f"cell {nbg(r).get('grade_id')!r} was missing; {', '.join(sorted(names))} is "
                    "defined in another of your cells, which is graded"
                )
                continue
            missing_after.setdefault(prev_j, []).append(i)
            notes.append(f"cell {nbg(r).get('grade_id')!r} was missing: put back from the release")

    for i, j in sorted(match.items()):
        r, c = rel[i], sub[j]
        if _retyped(r, c):
            notes.append(
                f"answer cell {nbg(r).get('grade_id')!r} was a {c['cell_type']} cell: graded as "
                "code"
            )
        elif (
            nbg(r).get("locked")
            and not nbg(r).get("solution")
            and r.cell_type == "code"
            and _norm(HIDDEN_BLOCK.sub("", c["source"])) != _norm(r.source)
        ):
            notes.append(
                f"test cell {nbg(r).get('grade_id')!r} was edited: restored as released (code "
                "typed there was not run)"
            )
    cells = []
    for i in missing_after.get(-1, []):
        cells.append(_release_copy(rel[i]))
    for j, c in enumerate(sub):
        at = by_sub.get(j)
        cells.append(_merge(c, rel[at] if at is not None else None))
        for k in missing_after.get(j, []):
            cells.append(_release_copy(rel[k]))
    seen: set[str] = set()
    for n, cell in enumerate(cells):
        cid = cell.get("id")
        if not cid or not _VALID_ID.match(cid) or cid in seen:
            cid = f"cell-{n}"
            while cid in seen:
                cid += "x"
            cell["id"] = cid
        seen.add(cid)
    nb = new_notebook(cells=cells, metadata=copy.deepcopy(release.metadata))
    nbformat.validate(nb)
    return nb, notes


def _new_cell(cell_type: str, source: str, metadata: dict, cid: str | None):
    maker = {"code": new_code_cell, "markdown": new_markdown_cell, "raw": new_raw_cell}[cell_type]
    cell = maker(source=source, metadata=metadata)
    if cid:
        cell["id"] = cid
    return cell


def _release_copy(r):
    meta = copy.deepcopy(dict(r.metadata))
    return _new_cell(r.cell_type, r.source, meta, r.get("id"))


def _merge(c: dict, r) -> nbformat.NotebookNode:
    meta = {
        k: copy.deepcopy(v)
        for k, v in c["metadata"].items()
        # autograde: rubric marks
        if k not in ("nbgrader", "tags", "deletable", "editable", "autograde")
    }
    source = c["source"]
    if r is not None:
        for k in ("nbgrader", "tags", "deletable", "editable"):
            if k in r.metadata:
                meta[k] = copy.deepcopy(r.metadata[k])
        if nbg(r).get("locked") and not nbg(r).get("solution"):
            # nbgrader restores locked cells too; doing it here keeps matching honest
            source = r.source
    cell_type = r.cell_type if r is not None and _retyped(r, c) else c["cell_type"]
    return _new_cell(cell_type, source, meta, c["id"])


# -----------------------------------------------------------------------------------------------
# feedback
_INERT = re.compile(r'<pre class="student-markdown">[^<>]*</pre>')


def inert_markdown(source: str) -> str:
    """A student's markdown as the text they typed, one HTML ``<pre>`` block with no tag inside
    (idempotent).

    nbconvert renders markdown with raw HTML passed through, links of any scheme and ``attachment:``
    images looked up (a missing one ends the export): formgrader's manual-grading page and the
    feedback pages would run a student's ``<img onerror=...>`` in the reader's browser. Escaped in a
    ``<pre>`` (CommonMark HTML block type 1, which no blank line ends and MathJax skips), every
    character shows as typed and none is markup.
    """
    if _INERT.fullmatch(source):
        return source
    return f'<pre class="student-markdown">{html.escape(source)}</pre>'


def inert_student_cells(
    nb: nbformat.NotebookNode, release: nbformat.NotebookNode | None = None
) -> nbformat.NotebookNode:
    """A copy of ``nb`` whose markdown and raw cells that are not release text show as inert text.

    Locked cells were restored from the release (``rebuild``) and nbgrader, and a markdown cell
    whose text is exactly that of one of ``release``'s markdown cells is the instructor's text left
    as it was: both are rendered as written. Every other markdown or raw cell is the student's: its
    source goes through ``inert_markdown``, a raw cell becomes markdown (nbconvert's HTML export
    writes a raw cell's source into the page verbatim), attachments are dropped and only the
    nbgrader metadata (which formgrader needs to grade it) is kept.
    """
    out = copy.deepcopy(nb)
    ours = {
        c.source
        for c in (release.cells if release is not None else [])
        if c.cell_type == "markdown"
    }
    cells = []
    for cell in out.cells:
        if cell.cell_type == "markdown" and cell.source in ours:
            pass
        elif cell.cell_type in ("markdown", "raw") and not nbg(cell).get("locked"):
            meta = {"nbgrader": copy.deepcopy(nbg(cell))} if nbg(cell) else {}
            fresh = new_markdown_cell(source=inert_markdown(cell.source), metadata=meta)
            if cell.get("id"):
                fresh["id"] = cell["id"]
            cell = fresh
        cells.append(cell)
    out.cells = cells
    return out


def feedback_safe(
    graded: nbformat.NotebookNode, source: nbformat.NotebookNode, release: nbformat.NotebookNode
) -> nbformat.NotebookNode:
    """A copy of an autograded notebook fit for the student: hidden tests and their traceback lines
    removed."""
    nb = copy.deepcopy(graded)
    src_by_id = {nbg(c)["grade_id"]: c for c in source.cells if nbg(c).get("grade_id")}
    rel_by_id = {nbg(c)["grade_id"]: c for c in release.cells if nbg(c).get("grade_id")}
    secret = hidden_lines(source)
    for cell in nb.cells:
        gid = nbg(cell).get("grade_id")
        if cell.cell_type != "code":
            continue
        has_hidden = gid in src_by_id and HIDDEN_BLOCK.search(src_by_id[gid].source)
        if has_hidden or HIDDEN_BLOCK.search(cell.source):
            cell.source = (
                rel_by_id[gid].source if gid in rel_by_id else HIDDEN_BLOCK.sub("", cell.source)
            )
            for out in cell.get("outputs", []):
                if out.output_type == "error":
                    out.traceback = [f"{out.ename}: {out.evalue}"]
        for out in cell.get("outputs", []):
            _scrub(out, secret)
    return nb


def _scrub(out, secret: list[str]) -> None:
    def clean(text: str) -> str:
        for line in secret:
            text = text.replace(line, "[hidden test]")
        return text

    if "text" in out:
        out.text = clean(out.text)
    if out.output_type == "error":
        out.evalue = clean(out.evalue)
        out.traceback = [clean(t) for t in out.traceback]
    for key in ("data",):
        if key in out:
            for mime, val in list(out[key].items()):
                if isinstance(val, str):
                    out[key][mime] = clean(val)
