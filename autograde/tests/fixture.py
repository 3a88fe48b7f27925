"""A tiny nbgrader assignment ("fx") built in a temp dir, so harness tests do not depend on the real
notebooks.

Exercises: ``double(x)`` (2 points: visible + hidden checks) and ``square(x)`` (1 point, visible), a
written answer graded by hand (1 point), a ``demo`` cell (skipped while grading) and a setup cell.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ASSIGNMENT = "fx"

VISIBLE = """\
from course_lib.checks.engine import Case, Check, Registry, allclose, evaluate

def _double_cases():
    return [Case((3,), label="int", expected=6), Case((0.5,), label="float", expected=1.0)]

def _square_cases():
    return [Case((3.0,), label="3", expected=9.0), Case((-2.0,), label="-2", expected=4.0)]

CHECKS = [Check("double", "double", _double_cases, allclose(), hint="multiply by two"),
          Check("square", "square", _square_cases, allclose(), hint="x times x", forbidden=("numpy.square",))]
REGISTRY = Registry("fx_checks")

def check(name, fn):
    return evaluate(REGISTRY.get(name), fn)
"""  # noqa: E501

HIDDEN_INIT = """\
from pathlib import Path
CHECK_MODULES = ("double",)
from autograde.hidden import HiddenRegistry
HIDDEN = HiddenRegistry(__name__, Path(__file__).parent / "references")
hidden_check = HIDDEN.hidden_check
"""

HIDDEN_CHECKS = """\
import numpy as np
from course_lib.checks.engine import Case, Check, allclose

ASSIGNMENT = "fx"

def _cases():
    return [Case((np.arange(4.0),), label="array"), Case((-7,), label="negative int")]

CHECKS = [Check("double_hidden", "double", _cases, allclose(rtol=0, atol=0), hint="works for arrays too")]

# the visible check "double" in disguise (autograde/hidden/_twins.py): its numbers moved by a secret offset
from autograde.hidden._twins import twins
import fx_checks
CHECKS += twins(fx_checks.CHECKS, {"double": {"kind": lambda args, kwargs, rng: ((args[0] + rng.randint(5, 50),), kwargs)}})
"""  # noqa: E501


def _meta(grade_id: str, *, solution=False, grade=False, locked=False, points=None) -> dict:
    nb = {
        "grade_id": grade_id,
        "solution": solution,
        "grade": grade,
        "locked": locked,
        "schema_version": 3,
    }
    if points is not None:
        nb["points"] = points
    return {"nbgrader": nb}


def source_notebook() -> nbformat.NotebookNode:
    """The instructor version of the fixture notebook."""
    cells = [
        new_markdown_cell("# Fixture assignment\nDouble and square numbers."),
        new_code_cell(
            "import os\nimport numpy as np\nGRADING = os.environ.get('COURSE_GRADING') == '1'"
        ),
        new_code_cell(
            'def double(x):\n    """Two times x."""\n    ### BEGIN SOLUTION\n    return 2 * x\n'
            "    ### END SOLUTION",
            metadata=_meta("double", solution=True),
        ),
        new_code_cell(
            '"""double: doubles numbers and arrays (visible + hidden checks)"""\n'
            "from fx_checks import check\ncheck('double', double)\n"
            "### BEGIN HIDDEN TESTS\nfrom fx_hidden import hidden_check\n"
            "hidden_check('double_hidden', double)\n### END HIDDEN TESTS",
            metadata=_meta("test_double", grade=True, locked=True, points=2),
        ),
        new_code_cell(
            "# a plot or a timing sweep: not run while grading\nopen('demo_ran.txt', "
            "'w').write('x')",
            metadata={"tags": ["demo"]},
        ),
        new_code_cell(
            "def square(x):\n    ### BEGIN SOLUTION\n    return x * x\n    ### END SOLUTION",
            metadata=_meta("square", solution=True),
        ),
        new_code_cell(
            '"""square: squares numbers"""\nfrom fx_checks import check\ncheck(\'square\', square)',
            metadata=_meta("test_square", grade=True, locked=True, points=1),
        ),
        new_markdown_cell("Why is 2 * x the same as x + x?", metadata=_meta("q_why", locked=True)),
        new_markdown_cell(
            "Multiplication distributes: 2x = (1 + 1)x = x + x.",
            metadata=_meta("a_why", solution=True, grade=True, points=1),
        ),
    ]
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


def make_course(root: Path) -> Path:
    """Write the fixture course under ``root`` (solutions/, pylib/ with its check modules); return
    root."""
    sol = root / "solutions" / ASSIGNMENT
    sol.mkdir(parents=True)
    nbformat.write(source_notebook(), sol / f"{ASSIGNMENT}.ipynb")
    lib = root / "pylib"
    (lib / "fx_hidden").mkdir(parents=True)
    (lib / "fx_checks.py").write_text(VISIBLE)
    (lib / "fx_hidden" / "__init__.py").write_text(HIDDEN_INIT)
    (lib / "fx_hidden" / "double.py").write_text(HIDDEN_CHECKS)
    zoo = root / "bugzoo" / ASSIGNMENT
    zoo.mkdir(parents=True)
    (zoo / "double_plus.py").write_text(
        '"""x + 2 instead of 2 * x."""\nTARGET = "double"\ndef double(x):\n    return x + 2\n'
    )
    (zoo / "double_scalar_only.py").write_text(
        '"""float(x): breaks on arrays."""\nTARGET = "double"\n'
        "def double(x):\n    return 2 * float(x)\n"
    )
    (zoo / "square_abs.py").write_text(
        '"""abs(x) * x: wrong sign for negatives."""\nTARGET = "square"\n'
        "def square(x):\n    return abs(x) * x\n"
    )
    return root
