"""Every quotation of the module's notes in a notebook is really in the notes.

The notes the course teaches from live beside the repository, in ../shared/seed/*.txt (their code
lost its indentation there; everything else is as written). The notebooks quote them in two forms:
- a code cell whose first line is ``# From the notes, verbatim (re-indented only):``: the rest of
the cell is
  the notes' code, run as written;
- a markdown blockquote (lines starting with ``>``): sentences or lines of code from the notes, each
line
  optionally in backticks.
Both must occur in the notes after normalising whitespace (any run of whitespace, including none at
a line break that the notes' text lost, compares equal). Runs over solutions/ and notebooks/
(students see the quotes too). Costs well under a second: it only reads files.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTES_DIR = ROOT.parent / "shared" / "seed"
MARKER = "# From the notes, verbatim (re-indented only):"


def squash(text: str) -> str:
    """Whitespace-normalised text: every run of whitespace removed (the notes' text lost line
    breaks)."""
    return re.sub(r"\s+", "", text)


def notebooks() -> list[Path]:
    """Every solution and student notebook of the course."""
    return sorted((ROOT / "solutions").glob("*/*.ipynb")) + sorted(
        (ROOT / "notebooks").glob("*/*.ipynb")
    )


def quotes(nb_path: Path) -> list[tuple[str, str]]:
    """(where, quoted text) for every quotation of the notes in one notebook."""
    out = []
    for i, cell in enumerate(json.loads(nb_path.read_text())["cells"]):
        src = "".join(cell["source"])
        where = f"{nb_path.relative_to(ROOT)} cell {i} ({cell.get('id')})"
        if cell["cell_type"] == "code" and src.startswith(MARKER):
            out.append((where, src[len(MARKER) :]))
        elif cell["cell_type"] == "markdown":
            block: list[str] = []
            for line in src.splitlines() + [""]:
                if line.startswith(">"):
                    block.append(line[1:].strip().strip("`"))
                elif block:
                    out.append((where, " ".join(block).strip()))
                    block = []
    return out


@pytest.fixture(scope="module")
def notes() -> str:
    files = sorted(NOTES_DIR.glob("*.txt"))
    if not files:
        pytest.skip(f"the module's notes are not beside the repository ({NOTES_DIR}/*.txt)")
    return squash("\n".join(f.read_text(encoding="utf-8") for f in files))


def test_squash_joins_what_the_notes_lost():
    assert squash("for t in ts:\n    print(t)") == squash("for t in ts:\nprint(t)")
    assert squash("return x") in squash("return xStage 3: Transformer Forward Pass")
    assert squash("return  y") not in squash("return x")


def test_the_notebooks_quote_the_notes():
    """The quoting conventions are in use: each assignment quotes the notes at least once, in
    code."""
    for nb_path in sorted((ROOT / "solutions").glob("*/*.ipynb")):
        kinds = [q for q in quotes(nb_path) if "```" not in q[1]]
        assert kinds, f"{nb_path.name}: no quotation of the notes found"


@pytest.mark.parametrize(
    "nb_path", notebooks(), ids=lambda p: p.parent.name + "/" + p.parent.parent.name
)
def test_every_quote_is_in_the_notes(notes, nb_path):
    missing = [(where, text[:200]) for where, text in quotes(nb_path) if squash(text) not in notes]
    assert not missing, (
        "quoted as the notes' words, but not in ../shared/seed/*.txt:\n"
        + "\n".join(f"  {w}: {t!r}" for w, t in missing)
    )
