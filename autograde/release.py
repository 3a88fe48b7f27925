"""`release`: solutions/ -> notebooks/ (nbgrader generate_assignment, normalised) + stored
references."""

from __future__ import annotations

import atexit
import functools
import hashlib
import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import nbformat

from autograde import generated
from autograde.course import Course, write_atomic


@dataclass
class Template:
    """What grading an assignment needs from nbgrader: a gradebook holding the assignment, and its
    notebooks."""

    assignment: str
    # sqlite file made by generate_assignment (copy it per student)
    gradebook: Path
    data_dir: Path  # the assignment's non-notebook files
    notebooks: dict[str, str]  # notebook name -> normalised release text
    source_paths: dict[str, Path]  # notebook name -> instructor notebook in solutions/


def normalise(nb: nbformat.NotebookNode) -> str:
    """Stable text of a student notebook: no outputs, minimal metadata, sorted keys, trailing
    newline."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    ks = nb.metadata.get(
        "kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"}
    )
    nb.metadata = nbformat.from_dict({"kernelspec": ks, "language_info": {"name": "python"}})
    nbformat.validate(nb)
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


_TEMPLATES: dict[tuple[str, str], Template] = {}


def _tree_hash(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file() and ".ipynb_checkpoints" not in p.parts and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(folder)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def template(course: Course, assignment: str) -> Template:
    """The assignment's template, built once per process and content of solutions/<assignment>/."""
    key = (str(course.solutions / assignment), _tree_hash(course.solutions / assignment))
    if key not in _TEMPLATES:
        workdir = Path(tempfile.mkdtemp(prefix="autograde-template-"))
        atexit.register(shutil.rmtree, workdir, True)
        _TEMPLATES[key] = build_template(course, assignment, workdir)
    return _TEMPLATES[key]


def build_template(course: Course, assignment: str, workdir: Path) -> Template:
    """Run nbgrader generate_assignment for one assignment in a throwaway course under
    ``workdir``."""
    from nbgrader.apps import NbGraderAPI
    from traitlets.config import Config

    work = workdir / assignment
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(
        course.solutions / assignment,
        work / "source" / assignment,
        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"),
    )
    c = Config()
    c.CourseDirectory.root = str(work)
    c.CourseDirectory.source_directory = "source"
    c.CourseDirectory.release_directory = "release"
    c.CourseDirectory.db_url = f"sqlite:///{work / 'gradebook.db'}"
    api = NbGraderAPI(config=c)
    res = api.generate_assignment(assignment, force=True, create=True)
    if not res["success"]:
        raise RuntimeError(
            f"nbgrader generate_assignment {assignment} failed:\n"
            f"{res.get('error', '')}\n{res.get('log', '')}"
        )
    rel = work / "release" / assignment
    notebooks = {
        p.stem: normalise(nbformat.read(str(p), as_version=4)) for p in sorted(rel.glob("*.ipynb"))
    }
    data = work / "data"
    shutil.copytree(
        course.solutions / assignment,
        data,
        ignore=shutil.ignore_patterns("*.ipynb", ".ipynb_checkpoints", "__pycache__"),
    )
    return Template(
        assignment,
        work / "gradebook.db",
        data,
        notebooks,
        {p.stem: p for p in course.source_notebooks(assignment)},
    )


def dump_references(refs: dict) -> str:
    """Stored references as stable text: one compact JSON line per case, so diffs show which case
    changed."""
    lines = [
        "{",
        f' "assignment": {json.dumps(refs["assignment"])},',
        f' "format": {refs["format"]},',
        ' "checks": {',
    ]
    names = sorted(refs["checks"])
    for i, name in enumerate(names):
        chk = refs["checks"][name]
        lines.append(
            f'  {json.dumps(name)}: {{"reference": {json.dumps(chk["reference"])}, "cases": ['
        )
        cases = [
            json.dumps(c, sort_keys=True, allow_nan=False, ensure_ascii=False) for c in chk["cases"]
        ]
        lines += [f"   {c}," for c in cases[:-1]] + [f"   {c}" for c in cases[-1:]]
        lines.append("  ]}" + ("," if i < len(names) - 1 else ""))
    lines += [" }", "}"]
    return "\n".join(lines) + "\n"


def stale_release(course: Course, template: Template) -> list[str]:
    """Committed student notebooks that differ from a fresh generate_assignment (empty when up to
    date)."""
    stale = []
    for name, text in template.notebooks.items():
        path = course.release_notebook(template.assignment, name)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(str(path.relative_to(course.root)))
    committed = course.release / template.assignment
    for p in sorted(committed.glob("*.ipynb")) if committed.is_dir() else []:
        if p.stem not in template.notebooks:
            stale.append(f"{p.relative_to(course.root)} (no longer in solutions/)")
    return stale


def draw_generated(course: Course, assignment: str) -> bool:
    """Draw the generated hidden cases (``autograde.generated``) the assignment's hidden modules
    declare and lack; True if the stored file changed. Only the course's own hidden package declares
    any."""
    registry = course.hidden_registry()
    specs: dict[str, tuple[Callable[[], Any], int]] = {}
    modules = {id(m): m for _, m in registry.all()}.values()
    for module in modules:
        if getattr(module, "ASSIGNMENT", None) != assignment:
            continue
        for check, (strategy, count) in getattr(module, "GENERATED", {}).items():
            specs[check] = (functools.partial(_strategy, strategy), count)
    return generated.generate(assignment, specs) if specs else False


def _strategy(name: str):
    """The strategy registered as ``name`` (autograde.strategies.STRATEGIES), imported only when a
    release draws: grading never imports Hypothesis."""
    from autograde.strategies import STRATEGIES

    return STRATEGIES[name]()


def release(course: Course, assignments: list[str] | None = None, log=print) -> list[str]:
    """Regenerate notebooks/ and the references of the given (default: all) assignments; return
    written paths.

    A file is written only when its content changes; a reference case is rewritten only when
    ``release --check`` would call it stale (see ``settle_references``), so an unchanged release
    writes nothing.
    """
    from autograde.references import compute_references, settle_references

    written = []
    for a in assignments or course.assignments():
        t = template(course, a)
        dest = course.release / a
        dest.mkdir(parents=True, exist_ok=True)
        for name, text in t.notebooks.items():
            path = dest / f"{name}.ipynb"
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                write_atomic(path, text)
                written.append(str(path))
        for f in sorted(t.data_dir.rglob("*")):
            if f.is_file():
                target = dest / f.relative_to(t.data_dir)
                if not target.exists() or target.read_bytes() != f.read_bytes():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(f, target)
                    written.append(str(target))
        if draw_generated(course, a):
            written.append(str(generated.FOLDER / f"{a}.json"))
        path = course.hidden_registry().reference_path(a)
        stored = None
        if path.exists():
            try:
                stored = json.loads(path.read_text(encoding="utf-8"))
            except ValueError:
                stored = None  # unreadable: rewritten from the fresh computation
        refs = settle_references(course, stored, compute_references(course, a))
        text = dump_references(refs)
        if refs["checks"] and (not path.exists() or path.read_text(encoding="utf-8") != text):
            write_atomic(path, text)
            written.append(str(path))
        log(
            f"released {a}: {len(t.notebooks)} notebook(s), {len(refs['checks'])} hidden check(s) "
            "with references"
        )
    return written
