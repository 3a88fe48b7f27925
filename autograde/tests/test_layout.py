"""The trust boundary is the package layout (issue 36): autograde/inside/ holds everything that runs
in a sandbox or a limited child, is mounted whole, and imports only what a sandbox has; the trusted
side imports from it only the entry points' names and the three modules both sides share (wire,
cells, codec). Read from the source (ast): no module is run, < 2 s.

Without these, a top-level import added to a module that runs inside passed every in-process test
and failed only inside bubblewrap, as a per-student "verification process exited".
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

from autograde import inside, sandbox
from autograde.course import REPO, Course
from autograde.verify import course_sandbox

AUTOGRADE = REPO / "autograde"
INSIDE = AUTOGRADE / "inside"
# the notebook libraries the inside modules use; the sandbox binds the whole Python installation, so
# they are there (test_what_inside_uses_is_in_the_python_installation_the_sandbox_binds)
NOTEBOOK_LIBRARIES = {
    "nbformat",
    "nbclient",
    "jupyter_client",
    "ipykernel",
    "IPython",
    "torch",
    "numpy",
    "tqdm",
}
# the modules of autograde/inside/ that the trusted side may import (besides the package's
# entry-point names)
SHARED = {
    "autograde.inside.wire",
    "autograde.inside.cells",
    "autograde.inside.codec",
    # the readers of a submission's text: the intake child's, and the grader's own (selfcheck
    # rebuilds notebooks, feedback pages are made inert)
    "autograde.inside.sanitize",
    "autograde.inside.scan",
    # the seccomp filters' assembler (the grader's sandbox filter, the answers' process's)
    "autograde.inside.nospawn",
}
# autograde/inside/__init__.py: strings only
ENTRY_NAMES = {"RUNNER", "KERNEL", "RELAY", "INTAKE", "ENTRY_POINTS"}
# answers and bugs written as students would, not harness code
NOT_HARNESS = {"tests", "inside", "bugzoo", "alternatives", "equivalent_mutants"}


def _module(path: Path) -> str:
    return ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")


def _imports(path: Path) -> list[tuple[str, tuple[str, ...], int]]:
    """(module, names imported from it, line) of every import in a file, at any depth (functions
    included)."""
    package = _module(path) if path.name == "__init__.py" else _module(path).rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out += [(a.name, (), node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # a relative import: from its package, up node.level - 1 levels
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            out.append((base, tuple(a.name for a in node.names), node.lineno))
    return out


def _inside_allowed(module: str, importer: str) -> bool:
    top = module.split(".")[0]
    return (
        top in sys.stdlib_module_names
        or top in NOTEBOOK_LIBRARIES
        or top == "course_lib"
        or module == "autograde.inside"
        or module.startswith("autograde.inside.")
    )


def _inside_files() -> list[Path]:
    return sorted(INSIDE.rglob("*.py"))


def test_the_inside_package_imports_only_the_standard_library_notebook_libraries_and_course_lib():
    # autograde/__init__.py runs first in every `python -m autograde.inside.<name>`: it is held to
    # the same rule
    bad = [
        f"{path.relative_to(REPO)}:{line}: {module}"
        for path in [AUTOGRADE / "__init__.py", *_inside_files()]
        for module, names, line in _imports(path)
        if not _inside_allowed(module, _module(path))
        and not (
            module == "autograde"
            and all(_inside_allowed(f"autograde.{n}", _module(path)) for n in names)
        )
    ]
    assert not bad, (
        "modules that run inside a sandbox import what no sandbox mounts:\n" + "\n".join(bad)
    )


def test_the_modules_both_sides_share_import_only_the_standard_library_and_the_check_engine():
    # what the grader imports from autograde/inside/ runs no student code and pulls in nothing of
    # the rest (the codec decodes tensors and arrays: torch and numpy, imported when a value holds
    # one; the readers read notebooks with nbformat and the rules' reading of text)
    bad = [
        f"{path.relative_to(REPO)}:{line}: {module}"
        for path in _inside_files()
        if _module(path) in SHARED
        for module, _, line in _imports(path)
        if module.split(".")[0] not in {*sys.stdlib_module_names, "torch", "numpy", "nbformat"}
        and module not in SHARED
        and module not in ("course_lib.checks.engine", "course_lib.checks.rules")
    ]
    assert not bad, bad


def test_course_lib_imports_nothing_of_the_harness():
    # the sandboxes mount course_lib whole and only autograde/inside/ of the harness (and students
    # get no harness)
    bad = [
        f"{path.relative_to(REPO)}:{line}: {module}"
        for path in sorted((REPO / "course_lib").rglob("*.py"))
        for module, _, line in _imports(path)
        if module.split(".")[0] == "autograde"
    ]
    assert not bad, bad


def test_the_trusted_side_imports_only_the_entry_points_names_and_the_shared_modules():
    trusted = [
        p
        for p in sorted(AUTOGRADE.rglob("*.py"))
        if not (set(p.relative_to(AUTOGRADE).parts[:-1]) & NOT_HARNESS)
        and p.parent.name not in NOT_HARNESS
    ]
    assert AUTOGRADE / "grade.py" in trusted and not any(INSIDE in p.parents for p in trusted)
    bad = []
    for path in trusted:
        for module, names, line in _imports(path):
            named = [module] if module != "autograde" else [f"autograde.{n}" for n in names]
            for m in named:
                if m == "autograde.inside" and module == "autograde.inside":
                    if not set(names) <= ENTRY_NAMES | {s.rpartition(".")[2] for s in SHARED}:
                        bad.append(f"{path.relative_to(REPO)}:{line}: {m} {names}")
                elif (
                    m == "autograde.inside" or m.startswith("autograde.inside.")
                ) and m not in SHARED:
                    bad.append(f"{path.relative_to(REPO)}:{line}: {m}")
    assert not bad, (
        "the trusted side imports code that runs inside (spawn it with -m instead):\n"
        + "\n".join(bad)
    )


def test_the_package_names_only_strings_and_its_entry_points_are_its_modules():
    public = {
        n: v
        for n, v in vars(inside).items()
        if not n.startswith("_") and not isinstance(v, type(sys))
    }
    assert public.keys() == ENTRY_NAMES
    assert inside.ENTRY_POINTS == (inside.RUNNER, inside.KERNEL, inside.RELAY, inside.INTAKE)
    assert not _imports(INSIDE / "__init__.py"), (
        "the trusted side imports autograde.inside for its names alone"
    )
    for name in inside.ENTRY_POINTS:
        path = REPO / Path(*name.split(".")).with_suffix(".py")
        assert path.parent == INSIDE and 'if __name__ == "__main__":' in path.read_text(), name


def test_the_sandbox_mounts_the_whole_inside_folder_so_no_module_of_it_can_be_missed():
    """The mount is the folder itself (a module added to it is mounted with it), with
    autograde/__init__.py; nothing else of autograde/ (the hidden checks, references, the grader) is
    mounted."""
    readonly, _ = course_sandbox(Course(), None)
    harness = [Path(p) for p in readonly if AUTOGRADE in Path(p).parents or Path(p) == AUTOGRADE]
    assert sorted(harness) == sorted([AUTOGRADE / "__init__.py", INSIDE]), harness
    assert REPO / "course_lib" in map(Path, readonly)
    mounted = [
        p for p in _inside_files() if any(p == m or m in p.parents for m in map(Path, readonly))
    ]
    assert mounted == _inside_files() and len(mounted) >= 7
    # and every module of the harness an inside module imports lies in the mount
    for path in _inside_files():
        for module, names, _ in _imports(path):
            for m in [module] if module != "autograde" else [f"autograde.{n}" for n in names]:
                if m.startswith("autograde"):
                    spec = importlib.util.find_spec(m)
                    assert spec is not None and spec.origin is not None, m
                    assert any(
                        Path(spec.origin) == p or p in Path(spec.origin).parents for p in harness
                    ), m


@pytest.mark.parametrize("library", sorted(NOTEBOOK_LIBRARIES))
def test_what_inside_uses_is_in_the_python_installation_the_sandbox_binds(library):
    spec = importlib.util.find_spec(library)
    assert spec is not None and spec.origin is not None, f"{library} is not installed"
    origin = Path(spec.origin).resolve()
    assert any(p == origin or p in origin.parents for p in sandbox.python_paths()), (
        origin,
        sandbox.python_paths(),
    )


def test_the_sandbox_command_is_built_in_one_place():
    """grade (the run) and verify (the verification) both call sandbox.command; nothing else builds
    a bubblewrap command or a memory group, but gradescope's probe of whether sandboxes work at all
    (it runs `print('ok')`)."""
    callers: dict[str, set[str]] = {}
    for path in sorted(AUTOGRADE.glob("*.py")):
        if path.name == "sandbox.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "sandbox"
                and node.func.attr in ("wrap", "MemoryGroup", "command")
            ):
                callers.setdefault(node.func.attr, set()).add(path.name)
    assert callers == {"command": {"grade.py", "verify.py"}, "wrap": {"gradescope.py"}}, callers
