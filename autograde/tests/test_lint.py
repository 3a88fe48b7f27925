"""Lint as the field's habit (issue 36): ruff's syntax, pyflakes, line-length (100), import-order
and complexity rules (no function above 25) over the repository, laid out as `ruff format` lays it
out, configured in pyproject.toml ([tool.ruff]); the corpora of answers
(bug zoo, alternatives) are notebook fragments and excluded. Fails with ruff's own report. And no
function of autograde/ or course_lib/ over 80 lines without the reason in its docstring (ruff has no
such rule: an ast walk, with the long ones listed). Types: mypy over the trusted grader's modules,
every autograde/*.py, listed in pyproject.toml ([tool.mypy] files)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_ruff_finds_nothing():
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--output-format", "concise", "."],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_ruff_format_would_change_nothing():
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "."],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_ruff_sees_what_it_is_asked_to_see(tmp_path):
    """The check can fail: an unused import, a function of complexity 26, a line of 101 characters
    and imports out of order in a scratch file are all found."""
    branches = "\n".join(f"    if x == {i}:\n        return {i}" for i in range(26))
    long = "x = " + "1 + " * 24 + "1"
    (tmp_path / "bad.py").write_text(
        f"import sys\nimport os\n\n\ndef f(x):\n{branches}\n    return -1\n\n\n{long}\n"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--output-format",
            "concise",
            "--config",
            str(REPO / "pyproject.toml"),
            str(tmp_path / "bad.py"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    for rule in ("F401", "C901", "E501", "I001"):
        assert rule in done.stdout, done.stdout + done.stderr


def test_mypy_finds_nothing_in_the_typed_grader_modules():
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_mypy_sees_what_it_is_asked_to_see(tmp_path):
    """The check can fail: a str passed where the code says int is found, with the project's
    settings."""
    (tmp_path / "bad.py").write_text("def f(x: int) -> int:\n    return x\n\n\nf('one')\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(REPO / "pyproject.toml"),
            str(tmp_path / "bad.py"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 1 and "arg-type" in done.stdout, done.stdout + done.stderr


def test_mypy_is_given_every_trusted_grader_module():
    """Every module directly in autograde/ (the trusted grader; not inside/, which runs in the
    sandboxes) is in [tool.mypy] files, so a new one is type-checked from its first commit."""
    import tomllib

    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["mypy"]["files"])
    modules = {p.relative_to(REPO).as_posix() for p in (REPO / "autograde").glob("*.py")}
    assert modules <= listed, (
        f"not in pyproject.toml's [tool.mypy] files: {sorted(modules - listed)}"
    )


# -------------------------------------------------------------------------------------------
# function length a function a reader holds in their head, from its `def` to its last line,
# docstring included
MAX_LINES = 80
# Longer ones, each with its reason in its docstring ("Why long: ..."):
LONG = {
    "autograde/hidden/debugging_generation.py::_rp_cases",
    "autograde/hidden/sampling.py::_sample_cases",
    "autograde/hidden/sampling.py::_top_p_cases",
    "autograde/hidden/sampling.py::_min_p_cases",
    "course_lib/checks/debugging_generation.py::_rp_cases",
    "course_lib/checks/debugging_generation.py::_pf_cases",
    "course_lib/checks/debugging_generation.py::_ngram_cases",
    "course_lib/checks/sampling.py::_top_p_cases",
    "course_lib/checks/sampling.py::_min_p_cases",
    "course_lib/checks/sampling.py::_pipeline_cases",
    "autograde/__main__.py::_parser",
    "autograde/boundary.py::run",
    "autograde/hidden/generation_loop.py::_gen_cases",
    "autograde/tests/attacks.py::attacks",
    "autograde/tests/test_deadlines.py::test_late_work_through_grading",
    "autograde/tests/test_grade.py::_samples",
    "autograde/inside/relay.py::_answers",
    "autograde/verify.py::verify_notebook",
}
# Longer ones waiting to be split or to have their reason written into the docstring, each with why
# it is here (empty: the 34 the 100-column layout pushed past 80 lines were split or say why)
PENDING: dict[str, str] = {}
SKIP = (
    "autograde/bugzoo",
    "autograde/alternatives",
    "autograde/equivalent_mutants",
    "autograde/tests/data",
)


def _long_functions(roots: list[Path], base: Path) -> dict[str, ast.AST]:
    """{'path::Qualified.name': node} for every function over MAX_LINES under ``roots``."""
    found = {}

    def visit(node, path: str, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                if (
                    not isinstance(child, ast.ClassDef)
                    and child.end_lineno - child.lineno + 1 > MAX_LINES
                ):
                    found[f"{path}::{name}"] = child
                visit(child, path, name + ".")
            else:
                visit(child, path, prefix)

    for root in roots:
        for p in sorted(root.rglob("*.py")):
            rel = p.relative_to(base).as_posix()
            if not rel.startswith(SKIP):
                visit(ast.parse(p.read_text(encoding="utf-8")), rel, "")
    return found


def test_no_function_is_over_80_lines_without_a_reason():
    """Issue 36: every function of autograde/ and course_lib/ fits in MAX_LINES, or says why not in
    its docstring; the lists above hold exactly the long ones (a function split since is taken off
    them)."""
    found = _long_functions([REPO / "autograde", REPO / "course_lib"], REPO)
    assert set(found) - LONG - set(PENDING) == set(), (
        "over 80 lines: split it, or say why in its docstring and list it"
    )
    assert (LONG | set(PENDING)) - set(found) == set(), (
        "listed as long but no longer is: take it off the list"
    )
    for name in LONG:
        assert "Why long:" in (ast.get_docstring(found[name]) or ""), (
            f"{name}: its docstring gives no reason"
        )


def test_the_length_check_sees_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES))
    (tmp_path / "m.py").write_text(
        f"class C:\n    def short(self):\n        pass\n\n    def f(self):\n{body}\n"
    )
    (tmp_path / "m.py").write_text((tmp_path / "m.py").read_text().replace("    x", "        x"))
    assert set(_long_functions([tmp_path], tmp_path)) == {"m.py::C.f"}
