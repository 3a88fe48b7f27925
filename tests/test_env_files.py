"""The three ways in (pip via pyproject.toml, conda via environment.yml, the `./course` script)
agree.

- environment.yml names exactly the packages pyproject.toml installs for `./course` (dependencies
plus the
  `grading` and `test` extras), each with the *same* version bounds (strict: equal specifier sets);
- the torch that `./course` pins on CPU-only Linux lies inside pyproject's torch range, and conda's
Python
  inside `requires-python`;
- `./course lab --smoke` starts JupyterLab and gets an answer.

Cost: <1 s for the file checks; ~8 s for the JupyterLab smoke run.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

tomllib = pytest.importorskip("tomllib")  # Python >= 3.11; the course's own environments use 3.11

ROOT = Path(__file__).resolve().parents[1]
CONDA_TO_PIP = {"pytorch": "torch"}  # conda's name for the same project
CONDA_ONLY = {"python", "pip"}


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _requirements(lines: list[str]) -> dict[str, SpecifierSet]:
    reqs: dict[str, SpecifierSet] = {}
    for line in lines:
        req = Requirement(line)
        name = canonicalize_name(req.name)
        assert name not in reqs, f"{name} listed twice"
        assert not req.marker and not req.extras, (
            f"keep {line!r} plain: both files must say the same"
        )
        reqs[name] = req.specifier
    return reqs


def pip_side() -> dict[str, SpecifierSet]:
    """What `./course` installs: dependencies + grading + test extras."""
    project = _pyproject()["project"]
    extras = project["optional-dependencies"]
    return _requirements(project["dependencies"] + extras["grading"] + extras["test"])


def conda_side() -> tuple[dict[str, SpecifierSet], str]:
    """Packages named in environment.yml (conda and pip sections) and its Python version."""
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert env["name"] == "how-llms-work"
    lines, python = [], None
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            lines += dep["pip"]
            continue
        # conda match spec "name[=version|>=a,<b]"; only python uses conda's single '='
        name, spec = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*(.*)", dep).groups()
        if name == "python":
            python = spec.lstrip("=")
        elif name not in CONDA_ONLY:
            lines.append(CONDA_TO_PIP.get(name, name) + spec)
    assert python, "environment.yml must pin python"
    return _requirements(lines), python


def test_same_packages_in_both_files():
    pip_reqs, (conda_reqs, _) = pip_side(), conda_side()
    assert sorted(conda_reqs) == sorted(pip_reqs), (
        f"only in environment.yml: {sorted(set(conda_reqs) - set(pip_reqs))}; "
        f"only in pyproject.toml: {sorted(set(pip_reqs) - set(conda_reqs))}"
    )


def test_same_version_bounds_in_both_files():
    pip_reqs, (conda_reqs, _) = pip_side(), conda_side()
    for name, spec in pip_reqs.items():
        assert conda_reqs[name] == spec, (
            f"{name}: pyproject says {spec!s}, environment.yml says {conda_reqs[name]!s}"
        )


def test_every_package_has_bounds_and_torch_is_a_range():
    pip_reqs = pip_side()
    unbounded = [name for name, spec in pip_reqs.items() if not str(spec)]
    assert not unbounded, f"give these a lower bound: {unbounded}"
    torch = pip_reqs["torch"]
    # Colab's torch must fit, not be replaced
    assert "2.2.0" in torch and "2.13.0" in torch and "3.0" not in torch


def test_online_extra_is_covered_by_test_extra():
    extras = _pyproject()["project"]["optional-dependencies"]
    assert _requirements(extras["online"]).items() <= _requirements(extras["test"]).items()


def test_conda_python_and_course_torch_pin_fit_pyproject():
    project = _pyproject()["project"]
    _, python = conda_side()
    assert Version(python + ".0") in SpecifierSet(project["requires-python"])
    pin = re.search(r"COURSE_TORCH:-torch==([0-9.]+)", (ROOT / "course").read_text())
    assert pin, "./course should pin a CPU torch for Linux x86_64 without CUDA"
    assert pin.group(1) in pip_side()["torch"]


def test_ci_runs_exactly_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    assert ci.startswith("#!/usr/bin/env bash\n") and "set -euo pipefail" in ci
    assert ci.strip().splitlines()[-1] == "exec ./course test"
    assert "./course test" in (ROOT / "README.md").read_text()
    for path in (ROOT / "course", ROOT / ".ci" / "run"):
        assert os.access(path, os.X_OK), f"{path} must be executable"


@pytest.mark.skipif(sys.platform == "win32", reason="bash script")
def test_course_lab_smoke():
    """`./course lab --smoke` in the environment running this test (set-up skipped: `./course test`
    just did it)."""
    env = {
        **os.environ,
        "COURSE_NO_SETUP": "1",
        "CI": "true",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    done = subprocess.run(
        [str(ROOT / "course"), "lab", "--smoke"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0 and done.stdout.strip().endswith("OK"), (
        done.stdout[-2000:] + done.stderr[-3000:]
    )
