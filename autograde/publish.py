"""`publish`: the student edition, what students receive: the course without anything only grading
needs.

    python -m autograde publish OUT [--repo-url https://github.com/ORG/REPO]

writes ``OUT/how-llms-work/`` (a complete course: notebooks/, the package course_lib, README,
pyproject, environment.yml, the ``course``/course.py set-up, a small test suite) and
``OUT/how-llms-work.zip``, the same files under one top folder with sorted entries and fixed
timestamps: publishing twice from unchanged sources writes identical bytes, so two editions can be
diffed (``MANIFEST.sha256`` lists every file's hash).

What it leaves out, as nbgrader's source/ folder or Otter's autograder/ folder never leaves the
instructor: solutions/, the grading harness (autograde/: hidden checks, references, generated cases,
bug zoo, alternatives, mutants, rubrics), the instructor's tests, and the visible package's
grading-only module ``course_lib/checks/toy_inputs.py`` (loaders for hidden cases' inputs).
``autograde/tests/test_edition.py`` proves that no answer reaches the edition or the wheel built
from it.

Colab: with ``--repo-url`` (a GitHub repository made from this edition) each notebook's set-up cell
installs the edition from that URL and README has a Colab badge per notebook. Without it, no link is
made up: the cell says on Colab that this copy has no online home, and README says how to open the
notebooks locally.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path

from autograde.course import GRADING_ONLY_MODULES, Course

NAME = "how-llms-work"
PLACEHOLDER_GIT_URL = "git+https://github.com/OWNER/how-llms-work.git"
TEMPLATES = Path(__file__).resolve().parent / "edition"
# Files of the visible package that exist only for grading (the sandbox rebuilds hidden cases'
# inputs with them).
GRADING_ONLY = frozenset(f"{m.replace('.', '/')}.py" for m in GRADING_ONLY_MODULES)
# the earliest time a zip entry can hold: no clock in the bytes
ZIP_TIME = (1980, 1, 1, 0, 0, 0)
EXECUTABLE = frozenset({"course"})
GITHUB = re.compile(r"https://github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?")
NO_URL_MD = (
    "### Running on Colab\n"
    "This copy of the course has no online home, so Colab cannot install it. Work on your own "
    "machine: "
    'in the course\'s\nfolder run `./course lab` (README, "Quick start"), which opens this '
    "notebook in "
    "JupyterLab. On your own\nmachine or the course's JupyterLab the cell below does nothing: "
    "just run it."
)
NO_URL_CELL = (
    "# Colab only: this copy of the course has no online home to install from. "
    "Elsewhere this does nothing.\n"
    "import os\n"
    'if "COLAB_RELEASE_TAG" in os.environ:\n'
    '    raise RuntimeError("this copy of the course cannot be installed on Colab: open it on '
    "your own "
    'machine with ./course lab (see README)")'
)


@dataclass(frozen=True)
class Edition:
    """Where ``publish`` wrote the edition: the folder and its zip."""

    folder: Path
    zip: Path


def git_url(repo_url: str | None) -> str | None:
    """``git+https://github.com/ORG/REPO.git`` for pip, from the repository's web address (None: no
    URL)."""
    if repo_url is None:
        return None
    m = GITHUB.fullmatch(repo_url.strip())
    if not m:
        raise ValueError(
            f"--repo-url must be a GitHub repository's address, https://github.com/ORG/REPO (Colab "
            f"opens notebooks from GitHub only); got {repo_url!r}"
        )
    return f"git+https://github.com/{m.group(1)}/{m.group(2)}.git"


def _colab_badges(url: str | None, assignments: list[str]) -> str:
    if url is None:
        return (
            "This copy of the course has no online home, so it has no Colab links: open the "
            "notebooks on your own machine\n(Quick start below) or on your course's JupyterHub."
        )
    m = GITHUB.fullmatch(url[len("git+") :])
    assert m is not None  # url is git_url's, made from a match of GITHUB
    repo = m.expand(r"\1/\2")
    badge = "[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
    rows = [
        f"| `{a}` | {badge}(https://colab.research.google.com/github/{repo}/blob/main/"
        f"notebooks/{a}/{a}.ipynb) |"
        for a in assignments
    ]
    return (
        "Open a notebook on Colab (its first cell installs the course there):\n\n| notebook | "
        "Colab |\n|---|---|\n" + "\n".join(rows)
    )


def student_notebook(text: str, url: str | None) -> str:
    """A released notebook's text with its Colab set-up pointing at the edition (or saying it has no
    home)."""
    nb = json.loads(text)
    code = [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"]
    first = nb["cells"][code[0]]
    src = "".join(first["source"]) if isinstance(first["source"], list) else first["source"]
    if PLACEHOLDER_GIT_URL not in src:
        raise ValueError(
            "the notebook's first code cell is not the Colab set-up cell (course_lib.colab.CELL)"
        )
    if url is not None:
        first["source"] = src.replace(PLACEHOLDER_GIT_URL, url)
    else:
        first["source"] = NO_URL_CELL
        md = nb["cells"][code[0] - 1] if code[0] > 0 else None
        if (
            md is not None
            and md["cell_type"] == "markdown"
            and "Running on Colab" in "".join(md["source"])
        ):
            md["source"] = NO_URL_MD
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def student_colab_module(text: str, url: str | None) -> str:
    """course_lib/colab.py with the edition's URL in place of the instructor repository's
    placeholder."""
    note = (
        '"""Placeholder: the course\'s git URL. Replace OWNER (here, in every notebook\'s first '
        "cell and in\nREADME) when the repository is published; `tests/test_colab.py` checks that "
        'the three agree."""'
    )
    if note not in text or PLACEHOLDER_GIT_URL not in text:
        raise ValueError(
            "course_lib/colab.py changed: update autograde/publish.py's student_colab_module"
        )
    text = text.replace(
        note,
        '"""Where this edition is published (set by `python -m autograde publish '
        '--repo-url`; empty: nowhere)."""',
    )
    return text.replace(PLACEHOLDER_GIT_URL, url or "")


def _toml_list(items: list[str]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


def _extra(extras: dict[str, list[str]], group: str, name: str) -> str:
    found = [r for r in extras[group] if re.match(rf"{re.escape(name)}\b", r)]
    if len(found) != 1:
        raise ValueError(f"pyproject.toml's [{group}] extra has no single {name!r} requirement")
    return found[0]


def student_extras(project: dict) -> dict[str, list[str]]:
    """The edition's extras, with the instructor pyproject's own bounds: JupyterLab to work, pytest
    to test."""
    extras = project["optional-dependencies"]
    return {
        "lab": [_extra(extras, "grading", "jupyterlab")],
        "test": [_extra(extras, "test", "pytest"), "nbclient>=0.7", "ipykernel>=6"],
    }


def student_pyproject(project: dict) -> str:
    """The edition's pyproject.toml: the package course_lib only, the course's dependencies, no
    grading extras."""
    extras = student_extras(project)
    lines = [
        "[build-system]",
        'requires = ["setuptools>=64"]',
        'build-backend = "setuptools.build_meta"',
        "",
        "[project]",
        f"name = {json.dumps(project['name'])}",
        f"version = {json.dumps(project['version'])}",
        'description = "How LLMs Work: a hands-on course on tokenizers, transformers and text '
        "generation "
        '(student edition)"',
        'readme = "README.md"',
        f"requires-python = {json.dumps(project['requires-python'])}",
        f"license = {{ text = {json.dumps(project['license']['text'])} }}",
        "# Ranges, not pins: on Colab the preinstalled torch (and numpy) must satisfy these as "
        "they are.",
        "dependencies = [",
        *[f"    {json.dumps(d)}," for d in project["dependencies"]],
        "]",
        "",
        "[project.optional-dependencies]",
        *[f"{k} = {_toml_list(v)}" for k, v in extras.items()],
        "",
        "[tool.setuptools.packages.find]",
        'include = ["course_lib*"]',
        "",
        "[tool.pytest.ini_options]",
        'testpaths = ["tests"]',
    ]
    return "\n".join(lines) + "\n"


def student_environment(project: dict, conda_text: str) -> str:
    """environment.yml for conda: the instructor file's python and pytorch lines, then the edition's
    packages."""
    python = re.search(r"^  - python=.*$", conda_text, re.M)
    torch = re.search(r"^  - pytorch.*$", conda_text, re.M)
    if not (python and torch):
        raise ValueError(
            "environment.yml lost its python or pytorch line: update autograde/publish.py"
        )
    extras = student_extras(project)
    pip = (
        [d for d in project["dependencies"] if not d.startswith("torch")]
        + extras["lab"]
        + extras["test"]
    )
    return (
        "\n".join(
            [
                "# conda path: conda env create -f environment.yml && conda activate how-llms-work "
                "&& pip install -e . --no-deps",
                "# Same packages and bounds as pyproject.toml (dependencies + the lab and test "
                "extras).",
                "name: how-llms-work",
                "channels:",
                "  - conda-forge",
                "dependencies:",
                python.group(0),
                torch.group(0),
                "  - pip",
                "  - pip:",
                *[f"      - {d}" for d in pip],
            ]
        )
        + "\n"
    )


def student_readme(template: str, url: str | None, assignments: list[str]) -> str:
    return template.replace("{{COLAB}}", _colab_badges(url, assignments))


def edition_files(course: Course, repo_url: str | None = None) -> dict[str, bytes]:
    """Every file of the edition: relative path -> bytes (nothing is written)."""
    import tomllib

    url = git_url(repo_url)
    root = course.root
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    files: dict[str, bytes] = {}
    assignments = course.assignments()
    for a in assignments:
        for p in sorted((course.release / a).rglob("*")):
            if not p.is_file() or {"__pycache__", ".ipynb_checkpoints"} & set(p.parts):
                continue
            rel = p.relative_to(root).as_posix()
            data = p.read_bytes()
            files[rel] = (
                student_notebook(data.decode("utf-8"), url).encode()
                if p.suffix == ".ipynb"
                else data
            )
    for p in sorted((root / "course_lib").rglob("*.py")):
        rel = p.relative_to(root).as_posix()
        if "__pycache__" in p.parts or rel in GRADING_ONLY:
            continue
        files[rel] = p.read_bytes()
    files["course_lib/colab.py"] = student_colab_module(
        files["course_lib/colab.py"].decode(), url
    ).encode()
    for name in ("course", "course.py"):
        files[name] = (root / name).read_bytes()
    files["pyproject.toml"] = student_pyproject(project).encode()
    files["environment.yml"] = student_environment(
        project, (root / "environment.yml").read_text()
    ).encode()
    files["README.md"] = student_readme(
        (TEMPLATES / "README.md").read_text(encoding="utf-8"), url, assignments
    ).encode()
    for p in sorted((TEMPLATES / "tests").glob("*.py")):
        files[f"tests/{p.name}"] = p.read_bytes()
    files[".gitignore"] = (
        b".venv/\n__pycache__/\n*.pyc\n.pytest_cache/\n*.egg-info/\nbuild/\ndist/\n"
        b".ipynb_checkpoints/\n"
    )
    files["MANIFEST.sha256"] = "".join(
        f"{hashlib.sha256(files[k]).hexdigest()}  {k}\n" for k in sorted(files)
    ).encode()
    return files


def write_zip(files: dict[str, bytes], path: Path, top: str = NAME) -> None:
    """A zip that depends only on the files: sorted entries, a fixed time, fixed permissions."""
    tmp = path.with_name(path.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for rel in sorted(files):
            info = zipfile.ZipInfo(f"{top}/{rel}", date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            # unix, so that the permission bits below mean the same everywhere
            info.create_system = 3
            mode = 0o755 if rel in EXECUTABLE else 0o644
            info.external_attr = (stat.S_IFREG | mode) << 16
            z.writestr(info, files[rel], compresslevel=9)
    tmp.replace(path)


def publish(course: Course, out: Path, repo_url: str | None = None) -> Edition:
    """Write the edition to ``out/how-llms-work/`` and ``out/how-llms-work.zip``; return both paths.

    An existing ``out/how-llms-work/`` is replaced only if it is an edition (it holds
    MANIFEST.sha256)."""
    files = edition_files(course, repo_url)
    out.mkdir(parents=True, exist_ok=True)
    folder = out / NAME
    if folder.exists():
        if not (folder / "MANIFEST.sha256").is_file():
            raise FileExistsError(
                f"{folder} exists and is not an edition (no MANIFEST.sha256): choose another OUT"
            )
        shutil.rmtree(folder)
    for rel, data in files.items():
        p = folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        p.chmod(0o755 if rel in EXECUTABLE else 0o644)
    zip_path = out / f"{NAME}.zip"
    write_zip(files, zip_path)
    return Edition(folder, zip_path)
