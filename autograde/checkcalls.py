"""Which checks a notebook's test cells run: the calls registered in ``TEST_CALLS``, found under any
name.

The verification runs outside the kernel exactly the checks this finds (autograde.verify), and the
references and the selfcheck are computed for them: a call it missed would be judged only inside the
student's kernel, which the student's code controls. So the reading is of the code, not of its text,
and it fails closed: a call it cannot name (a check passed around, called with a name that is not a
string literal, reached by ``getattr``) stops grading with the cell's id, instead of being skipped
(autograde/tests/test_registries.py).

It reads the instructor's notebooks (``solutions/``): the test cells a student's kernel runs are the
release's, restored at intake (autograde.inside.sanitize.rebuild), never the student's own.

A call is found when its function is
- a registered name (``check``, ``hidden_check``) or an alias of one: ``from course_lib.checks
import check as
  c``, ``c = check`` (bound in any code cell, as the notebook's kernel would have it when the test
  cell runs);
- an attribute with a registered name: ``checks.check(...)``,
``autograde.hidden.hidden_check(...)``.

Anything else that touches a registered name or an alias, in any code cell (a tuple assignment, a
wrapper function, a magic line that names one, a test cell that is not plain Python), is refused,
not guessed at.
"""

from __future__ import annotations

import ast
import threading

from autograde.inside.cells import is_autograded_test, nbg

# The registry: the functions a test cell calls to run a check, by name, and the Course field naming
# the package that exports each (the real course: course_lib.checks.check,
# autograde.hidden.hidden_check).
TEST_CALLS = {"check": "visible_package", "hidden_check": "hidden_package"}
# One parse at a time: the grader's threads read notebooks at the same moment (grade --workers,
# selfcheck), and CPython 3.11.7's ast.parse keeps its recursion depth per interpreter, not per
# thread: two at once raised "SystemError: AST constructor recursion depth mismatch"
# (test_selfcheck.py, workers=2)
_PARSE_LOCK = threading.Lock()


class UnreadableTestCell(ValueError):
    """A test cell calls a check in a way this reading cannot name: the course's notebook must be
    fixed."""


def _parse(source: str, where: str, test: bool) -> ast.Module:
    """A cell's code, IPython's magics and shell lines (``%time``, ``!ls``) blanked (line numbers
    kept). A magic can run code this reading does not see (``%time check(...)``): refused in a test
    cell, and in any cell where it names a registered call."""
    lines = source.splitlines()
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("%", "!")):
            if test or any(kind in line for kind in TEST_CALLS):
                raise UnreadableTestCell(
                    f"{where} runs code through an IPython magic or shell line "
                    f"({line.strip()[:60]!r}):"
                    " the grader reads which checks a notebook runs from plain Python only"
                )
            lines[i] = ""
    with _PARSE_LOCK:
        return ast.parse("\n".join(lines))


def _aliases(trees: list[ast.Module]) -> dict[str, str]:
    """{name: kind} for every name a notebook binds to a registered call (imports and plain
    assignments)."""
    names = {kind: kind for kind in TEST_CALLS}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for a in node.names:
                    if a.name in TEST_CALLS:
                        names[a.asname or a.name] = a.name
            elif isinstance(node, ast.Assign) and (kind := _kind(node.value, names)):
                names.update({t.id: kind for t in node.targets if isinstance(t, ast.Name)})
    return names


def _kind(func: ast.expr, names: dict[str, str]) -> str | None:
    """The registered call ``func`` names, if any."""
    if isinstance(func, ast.Name):
        return names.get(func.id)
    if isinstance(func, ast.Attribute) and func.attr in TEST_CALLS:
        return func.attr
    return None


def _calls_in(
    tree: ast.Module, names: dict[str, str], where: str
) -> list[tuple[int, int, str, str]]:
    """(line, column, kind, check name) of each registered call in one test cell; UnreadableTestCell
    for a use of a registered name that is not a call with a literal check name, or an alias made by
    assignment."""
    found, called = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (kind := _kind(node.func, names)):
            called.add(id(node.func))
            first = node.args[0] if node.args else None
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                raise UnreadableTestCell(
                    f"{where} calls {kind} without a check name written as a string: the "
                    "grader cannot tell which check it runs"
                )
            found.append((node.lineno, node.col_offset, kind, first.value))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and any(isinstance(a, ast.Constant) and a.value in TEST_CALLS for a in node.args)
        ):
            raise UnreadableTestCell(
                f"{where} reaches a check call through getattr: call it by name"
            )
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and _kind(node.value, names)
            # an alias: reported at its use below
            and all(isinstance(t, ast.Name) for t in node.targets)
        ):
            called.add(id(node.value))
        if (
            isinstance(node, (ast.Name, ast.Attribute))
            and isinstance(node.ctx, ast.Load)
            and _kind(node, names)
            and id(node) not in called
        ):
            raise UnreadableTestCell(
                f"{where} uses {_kind(node, names)} other than by calling it: the grader "
                "cannot tell which checks it runs"
            )
    return sorted(found)


def check_calls(nb) -> list[tuple[str, str, str]]:
    """(grade_id, 'check' | 'hidden_check', check name) for every check call in the notebook's test
    cells, in the order of the cells and, in a cell, of the source; UnreadableTestCell where a test
    cell's calls cannot all be named (see the module docstring)."""
    trees: list[tuple[object, ast.Module | None, str]] = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        test = is_autograded_test(cell)
        where = f"test cell {nbg(cell).get('grade_id')!r}" if test else f"cell {i}"
        try:
            trees.append((cell, _parse(cell.source, where, test), where))
        except SyntaxError as e:
            if test:
                raise UnreadableTestCell(
                    f"{where} is not valid Python ({e.msg}, line {e.lineno})"
                ) from None
            trees.append((cell, None, where))  # a cell that cannot run binds nothing
    names = _aliases([t for _, t, _ in trees if t is not None])
    out = []
    for cell, tree, where in trees:
        if tree is None:
            continue
        # every cell: an alias or a wrapper made anywhere is read or refused
        calls = _calls_in(tree, names, where)
        if is_autograded_test(cell):
            out += [(nbg(cell)["grade_id"], kind, name) for *_, kind, name in calls]
    return out
