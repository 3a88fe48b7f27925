"""`python -m course` (course.py) works without bash, and `./course` is only a thin wrapper around
it.

- with no bash anywhere on PATH, `python -m course --help` prints the commands and `python -m course
lab --smoke`
  (set-up skipped with COURSE_NO_SETUP=1: `./course test` just did it) starts JupyterLab and gets an
  answer, as a Windows student's `python -m course lab` would;
- course.py uses only the standard library (it runs before .venv exists);
- `./course` and course.py agree on the CPU torch pin and on unknown commands.
Cost: ~10-20 s (one JupyterLab start), measured on the 2-core machine.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def no_bash_env(tmp_path: Path) -> dict[str, str]:
    """The current environment with PATH reduced to an empty folder: no bash, no apt-get, no
    python3."""
    empty = tmp_path / "empty-path"
    empty.mkdir()
    env = {**os.environ, "PATH": str(empty), "CI": "true", "COURSE_NO_SETUP": "1"}
    assert shutil.which("bash", path=env["PATH"]) is None
    return env


def test_help_and_unknown_command_without_bash(tmp_path):
    env = no_bash_env(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "course", "--help"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    for command in (
        "python -m course lab",
        "python -m course lab --smoke",
        "python -m course test",
        "python -m course setup",
    ):
        assert command in done.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "course", "no-such-command"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "python -m course lab" in bad.stderr


def test_lab_smoke_without_bash(tmp_path):
    """The Windows path in README: `python -m course lab`, here as its smoke run, with no bash on
    PATH."""
    env = no_bash_env(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "course", "lab", "--smoke"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0 and done.stdout.strip().endswith("OK"), (
        done.stdout[-2000:] + done.stderr[-3000:]
    )


def test_course_py_imports_only_the_standard_library():
    tree = ast.parse((ROOT / "course.py").read_text())
    names = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    names |= {
        node.module.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
    }
    assert names - {"__future__"} <= set(sys.stdlib_module_names), names - set(
        sys.stdlib_module_names
    )


def test_wrapper_and_entry_point_pin_the_same_torch():
    import course

    wrapper = (ROOT / "course").read_text()
    pin = re.search(r"COURSE_TORCH:-(torch==[0-9.]+)", wrapper)
    assert pin and pin.group(1) == course.DEFAULT_CPU_TORCH
    assert re.search(r'^exec "\$PY" "\$ROOT/course.py" "\$@"$', wrapper, re.M), (
        "./course should hand over to course.py"
    )


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash here")
def test_wrapper_passes_exit_status_through():
    env = {**os.environ, "PYTHON": sys.executable}
    done = subprocess.run(
        [str(ROOT / "course"), "no-such-command"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "lab --smoke" in done.stderr
