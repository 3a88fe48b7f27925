"""Lint as the field's habit (issue 36): ruff's syntax, pyflakes and complexity rules (no function above 25) over
the repository, configured in pyproject.toml ([tool.ruff]); the corpora of answers (bug zoo, alternatives) are
notebook fragments and excluded. Fails with ruff's own report. Types: mypy over the trusted grader modules listed
in pyproject.toml ([tool.mypy] files)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_ruff_finds_nothing():
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--output-format", "concise", "."], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_ruff_sees_what_it_is_asked_to_see(tmp_path):
    """The check can fail: an unused import and a function of complexity 26 in a scratch file are both found."""
    branches = "\n".join(f"    if x == {i}:\n        return {i}" for i in range(26))
    (tmp_path / "bad.py").write_text(f"import os\n\n\ndef f(x):\n{branches}\n    return -1\n")
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--output-format", "concise",
                           "--config", str(REPO / "pyproject.toml"), str(tmp_path / "bad.py")],
                          capture_output=True, text=True, timeout=300)
    assert "F401" in done.stdout and "C901" in done.stdout, done.stdout + done.stderr


def test_mypy_finds_nothing_in_the_typed_grader_modules():
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary"], cwd=REPO, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_mypy_sees_what_it_is_asked_to_see(tmp_path):
    """The check can fail: a str passed where the code says int is found, with the project's settings."""
    (tmp_path / "bad.py").write_text("def f(x: int) -> int:\n    return x\n\n\nf('one')\n")
    done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml"),
                           str(tmp_path / "bad.py")], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1 and "arg-type" in done.stdout, done.stdout + done.stderr
