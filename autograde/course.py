"""Where a course's files live, and what its notebooks declare (graded cells, checks they call, demo
cells)."""

from __future__ import annotations

import json
import os
import re
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograde.checkcalls import check_calls  # noqa: F401 - re-exported: which checks test cells run
from autograde.inside.cells import (  # noqa: F401 - re-exported: both sides of the boundary read cells alike
    DEMO_TAG,
    HIDDEN_BLOCK,
    hidden_lines,
    is_autograded_test,
    is_demo,
    is_grade,
    is_solution,
    nbg,
)

REPO = Path(__file__).resolve().parents[1]
# Modules of the visible package that only grading needs: the loaders of hidden cases' inputs
# (engine.register_resource), which the verification's sandbox must rebuild and sees no hidden
# module to import them. Loaded there with the checks (Course.check_packages, the verification's
# AUTOGRADE_CHECK_PACKAGES); left out of the student edition (publish.GRADING_ONLY is made from
# this). autograde/tests/test_registries.py: each resolves, none is left out.
GRADING_ONLY_MODULES = ("course_lib.checks.toy_inputs",)


@dataclass(frozen=True)
class Course:
    """A course root: ``solutions/<id>/<id>.ipynb`` in, ``notebooks/<id>/`` out, checks and
    references.

    ``pythonpath`` is prepended to ``PYTHONPATH`` in grading kernels and to ``sys.path`` for
    in-process work (references, selfcheck), so that check packages of a test fixture can live
    outside the repo.
    """

    root: Path = REPO
    visible_package: str = "course_lib.checks"
    hidden_package: str = "autograde.hidden"
    references_dir: Path | None = None
    bugzoo_dir: Path | None = None
    pythonpath: tuple[Path, ...] = field(default_factory=tuple)
    cell_timeout: int = 120  # seconds per cell (c.Execute.timeout)
    # the course file of due dates and the late policy; None: root/deadlines.toml
    deadlines_path: Path | None = None

    @property
    def solutions(self) -> Path:
        return self.root / "solutions"

    @property
    def release(self) -> Path:
        return self.root / "notebooks"

    @property
    def deadlines_file(self) -> Path:
        """Due dates, extensions and the late policy (autograde/deadlines.py;
        docs/instructors.md)."""
        return self.deadlines_path or self.root / "deadlines.toml"

    @property
    def refs_dir(self) -> Path:
        return self.references_dir or self.root / "autograde" / "references"

    @property
    def zoo_dir(self) -> Path:
        return self.bugzoo_dir or self.root / "autograde" / "bugzoo"

    def assignments(self) -> list[str]:
        """Assignment ids: folders of solutions/ that hold a notebook."""
        if not self.solutions.is_dir():
            return []
        return sorted(
            p.name for p in self.solutions.iterdir() if p.is_dir() and any(p.glob("*.ipynb"))
        )

    def source_notebooks(self, assignment: str) -> list[Path]:
        """The instructor notebooks of an assignment."""
        return sorted((self.solutions / assignment).glob("*.ipynb"))

    def release_notebook(self, assignment: str, notebook: str) -> Path:
        """The committed student version of a notebook."""
        return self.release / assignment / f"{notebook}.ipynb"

    def path_entries(self) -> list[str]:
        """Directories grading kernels and in-process evaluation need on sys.path."""
        return [str(p) for p in self.pythonpath] + [str(REPO)]

    def ensure_importable(self) -> None:
        """Put this course's check packages on sys.path of this process."""
        import sys

        for p in reversed(self.path_entries()):
            if p not in sys.path:
                sys.path.insert(0, p)

    def package_spec(self, package: str):
        """Where this course's package ``package`` lives: searched on the course's own pythonpath
        first, so that a package of the same name imported earlier from another course (two fixture
        courses in one process) is not taken for it."""
        import importlib.machinery
        import importlib.util

        if self.pythonpath and "." not in package:
            spec = importlib.machinery.PathFinder.find_spec(
                package, [str(p) for p in self.pythonpath]
            )
            if spec is not None:
                return spec
        self.ensure_importable()
        return importlib.util.find_spec(package)

    def hidden_registry(self):
        """The HiddenRegistry of this course (imports the hidden package lazily)."""
        from autograde.hidden import HIDDEN, HiddenRegistry

        self.ensure_importable()
        if self.hidden_package == HIDDEN.package and self.refs_dir == HIDDEN.references_dir:
            return HIDDEN
        return HiddenRegistry(self.hidden_package, self.refs_dir)

    def check_packages(self) -> list[str]:
        """What the verification's sandbox loads before any cell runs: the visible package and its
        grading-only modules (GRADING_ONLY_MODULES)."""
        return [
            self.visible_package,
            *(m for m in GRADING_ONLY_MODULES if m.startswith(self.visible_package + ".")),
        ]

    def visible_registry(self):
        """The Registry of visible checks of this course."""
        from course_lib.checks.engine import VISIBLE, Registry

        return (
            VISIBLE if self.visible_package == VISIBLE.package else Registry(self.visible_package)
        )


def read_notebook(path: Path) -> nbformat.NotebookNode:
    """Read a notebook as nbformat v4."""
    return nbformat.read(str(path), as_version=4)


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a crash leaves either the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        # lone surrogates (a student's error text, a folder name that is not UTF-8) cannot be
        # written: U+FFFD
        f.write(re.sub("[\ud800-\udfff]", "\ufffd", text))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


# OUT/.autograde.lock: one writer at a time in an output folder (a whole course's)
LOCK = ".autograde.lock"


@contextmanager
def hold(out: Path):
    """Hold OUT for the duration: one ``grade`` or ``course-folder`` at a time writes a folder (its
    gradebook.db, ``.work/``, grades.csv), so that two assignments graded into one course folder at
    once cannot remove each other's work or interleave their gradebook writes. A second writer is
    refused at once, naming the folder (test_course_folder.py, test_a_second_writer_is_refused)."""
    import fcntl

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    # never through a link (the folder is the instructor's, but a lock is no reason to follow one)
    try:
        fd = os.open(out / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as e:
        raise RuntimeError(
            f"cannot take {out / LOCK} ({e.strerror}): is it a link? remove it"
        ) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise RuntimeError(
            f"{out} is being written by another `grade` or `course-folder` run (it holds "
            f"{out / LOCK}): wait for it to finish, then run this again"
        ) from None
    try:
        yield out
    finally:
        os.close(fd)


def dump_json(obj) -> str:
    """Stable JSON text: sorted keys, 1-space indent, trailing newline."""
    return json.dumps(obj, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


# ------------------------------------------------------------------------------------ students'
# folder names \Z: "$" would let a trailing newline through
SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,99}\Z")
# (a student id this harness grades: the ids lms-import makes; grade, gradebook and lms all hold
# folders to it)


def shown(name: str) -> str:
    """A folder name as a terminal may print it: control characters (escape sequences, newlines that
    would forge a line of the log) written as \\xNN (test_slots.py::
    test_folder_names_reach_the_terminal_without_control_characters)."""
    return "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in name)


def tools_beside_python() -> None:
    """Put this interpreter's folder first on PATH: nbgrader runs `alembic` by name, and in an
    unactivated virtual environment it is found only there. For entry points (the CLI,
    benchmarks)."""
    bindir = os.path.dirname(sys.executable)
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
