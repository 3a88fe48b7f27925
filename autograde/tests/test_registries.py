"""The registries (issue 36, item 5): check modules, Hypothesis strategies and the calls a test cell makes, each
named in code a reader can follow; every name resolves and nothing is left out. Fast: no notebook runs."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

import course_lib.checks
from autograde import hidden
from autograde.course import Course

REPO = Path(__file__).resolve().parents[2]
# modules of each check package that hold no checks, and why (each is imported by the modules that use it)
HELPERS = {
    "course_lib.checks": {"engine": "the engine", "rules": "the answer's text read for forbidden calls",
                          "trace": "the run-time watch of forbidden calls", "_attention_data": "a case's data"},
    "autograde.hidden": {"_twins": "visible checks in disguise, built by the topic modules"},
}


def _defines(path: Path) -> set[str]:
    """The top-level names a module's source assigns or defines (read, not imported)."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        names |= {t.id for t in targets if isinstance(t, ast.Name)}
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names


@pytest.mark.parametrize("package", [course_lib.checks, hidden], ids=lambda p: p.__name__)
def test_every_check_module_is_named_once_and_resolves(package):
    names = package.CHECK_MODULES
    assert len(set(names)) == len(names), names
    for name in names:
        module = importlib.import_module(f"{package.__name__}.{name}")
        assert isinstance(module.ASSIGNMENT, str) and module.CHECKS, name


@pytest.mark.parametrize("package", [course_lib.checks, hidden], ids=lambda p: p.__name__)
def test_no_module_of_a_check_package_is_left_out_of_its_registry(package):
    """Each file of the folder is a check module, a resource module or a helper named above: one that defines
    CHECKS but is named nowhere would be silently ungraded."""
    registered = set(package.CHECK_MODULES) | set(getattr(package, "RESOURCE_MODULES", ()))
    helpers = HELPERS[package.__name__]
    for path in sorted(Path(package.__file__).parent.glob("*.py")):
        name = path.stem
        if name == "__init__":
            continue
        assert name in registered or name in helpers, f"{path.name} is in no registry of {package.__name__}"
        if name not in package.CHECK_MODULES:
            assert "CHECKS" not in _defines(path), f"{path.name} defines CHECKS but {package.__name__} does not name it"


def test_resource_modules_are_the_grading_only_files_the_student_edition_leaves_out():
    from autograde.publish import GRADING_ONLY

    assert {f"course_lib/checks/{m}.py" for m in course_lib.checks.RESOURCE_MODULES} == set(GRADING_ONLY)


def test_the_course_registries_hold_the_checks_of_every_registered_module():
    course = Course()
    for registry, package in ((course.visible_registry(), course_lib.checks), (course.hidden_registry(), hidden)):
        modules = {m.__name__ for _, m in registry.all()}
        assert modules == {f"{package.__name__}.{n}" for n in package.CHECK_MODULES}


def _generated() -> dict[str, str]:
    """{check: strategy name} over every hidden module's GENERATED."""
    out = {}
    for name in hidden.CHECK_MODULES:
        for check, (strategy, _count) in getattr(importlib.import_module(f"autograde.hidden.{name}"),
                                                 "GENERATED", {}).items():
            out[check] = strategy
    return out


def test_every_strategy_a_hidden_module_names_resolves_and_every_registered_strategy_is_used():
    from autograde import strategies

    used = _generated()
    assert used, "no hidden module declares generated cases"
    unknown = {c: s for c, s in used.items() if s not in strategies.STRATEGIES}
    assert not unknown, f"strategies not in autograde.strategies.STRATEGIES: {unknown}"
    assert set(strategies.STRATEGIES) == set(used.values()), "registered but used by no hidden module"
    for name, factory in strategies.STRATEGIES.items():
        assert name == factory.__name__ and hasattr(factory(), "example"), name


def test_every_call_strategy_in_the_module_is_registered():
    from autograde import strategies

    calls = {n for n in _defines(REPO / "autograde" / "strategies.py") if n.endswith("_call")}
    assert calls == set(strategies.STRATEGIES)


def test_the_visible_registry_loads_without_its_grading_only_modules_as_in_the_student_edition(monkeypatch):
    from course_lib.checks.engine import Registry

    for m in course_lib.checks.RESOURCE_MODULES:
        monkeypatch.setitem(sys.modules, f"course_lib.checks.{m}", None)  # as if the file were absent
    assert len(Registry("course_lib.checks").all()) == len(Course().visible_registry().all())
