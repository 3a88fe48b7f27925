"""What a notebook's cells are, read the same way on both sides of the trust boundary: graded,
answer, test (autograded) and demo cells. The grader (autograde.course re-exports these), the
verification's answers' process (autograde.inside.relay) and the intake child
(autograde.inside.intake) must agree on which cells run.

With wire and codec, the only modules of autograde.inside that the trusted side imports besides the
entry points' names (autograde/tests/test_layout.py): standard library only.
"""

from __future__ import annotations

import re

DEMO_TAG = "demo"
# Line magics that change nothing an answer computes and that the verification turns into no-ops, as
# it does shell lines (`!nvidia-smi`) and automagic: a notebook that says them is read as plain
# (white-box red team 23, D3/D5: a Colab reflex failed every check of an honest notebook;
# relay.quiet_shell). The kernel still runs them.
NEUTRAL_MAGICS = frozenset(
    {"pip", "conda", "mamba", "load_ext", "reload_ext", "unload_ext", "autoreload", "aimport"}
    # a notebook's settings and looks around (white-box red team 24, F6: `%config
    # InlineBackend.figure_format = 'retina'` failed every check of an honest notebook)
    | {"config", "env", "set_env", "pwd", "ls", "xmode", "history", "debug"}
    # the editor's and debugger's switches, a look back, a profile of a call (its statement does
    # not run here: nothing it binds reaches the checks), a fresh start (white-box red team 25,
    # F1/F3: each failed every check of an honest notebook)
    | {"autosave", "hist", "pdb", "tb", "reset", "colors", "doctest_mode", "prun"}
    | {"page", "psource", "pfile", "notebook", "recall", "store"}
)
# cell magics whose body is not Python (notes, pictures) or runs in another program (a shell, which
# the answers' process cannot start: inside.nospawn): nothing in the verification
NEUTRAL_CELL_MAGICS = frozenset(
    {"html", "markdown", "latex", "svg", "javascript", "js"}
    | {"bash", "sh", "script", "perl", "ruby"}
)


def nbg(cell) -> dict:
    """The cell's nbgrader metadata ({} if none)."""
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def is_grade(cell) -> bool:
    return bool(nbg(cell).get("grade"))


def is_solution(cell) -> bool:
    return bool(nbg(cell).get("solution"))


def is_autograded_test(cell) -> bool:
    """A code cell with points and no answer in it: its score comes from running it."""
    return cell.cell_type == "code" and is_grade(cell) and not is_solution(cell)


def is_demo(cell) -> bool:
    return DEMO_TAG in cell.get("metadata", {}).get("tags", [])


def norm(src: str) -> str:
    """A cell's source without trailing spaces or surrounding blank lines: what identifies a locked
    cell (autograde.intake.fingerprints in the grader, autograde.inside.intake._identify in the
    intake child)."""
    return "\n".join(line.rstrip() for line in src.strip().splitlines())


HIDDEN_BLOCK = re.compile(r"### BEGIN HIDDEN TESTS\n?(.*?)### END HIDDEN TESTS", re.S)


def hidden_lines(nb) -> list[str]:
    """Non-trivial source lines inside hidden-test blocks (must never reach a student)."""
    lines = []
    for cell in nb.cells:
        for block in HIDDEN_BLOCK.findall(cell.source if cell.cell_type == "code" else ""):
            lines += [
                ln.strip()
                for ln in block.splitlines()
                if len(ln.strip()) > 8 and not ln.strip().startswith("#")
            ]
    return lines
