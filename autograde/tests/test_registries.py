"""The registries (issue 36, item 5): check modules, Hypothesis strategies and the calls a test cell
makes, each named in code a reader can follow; every name resolves and nothing is left out. Fast: no
notebook runs."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import course_lib.checks
from autograde import hidden
from autograde.course import GRADING_ONLY_MODULES, Course

REPO = Path(__file__).resolve().parents[2]
# modules of each check package that hold no checks, and why (each is imported by the modules that
# use it)
HELPERS = {
    "course_lib.checks": {"engine": "the engine", "_attention_data": "a case's data"},
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
    """Each file of the folder is a check module, a resource module or a helper named above: one
    that defines CHECKS but is named nowhere would be silently ungraded."""
    registered = (
        set(package.CHECK_MODULES)
        | set(getattr(package, "ENGINE_MODULES", ()))
        | {
            m.rpartition(".")[2]
            for m in GRADING_ONLY_MODULES
            if m.startswith(package.__name__ + ".")
        }
    )
    helpers = HELPERS[package.__name__]
    for path in sorted(Path(package.__file__).parent.glob("*.py")):
        name = path.stem
        if name == "__init__":
            continue
        assert name in registered or name in helpers, (
            f"{path.name} is in no registry of {package.__name__}"
        )
        if name not in package.CHECK_MODULES:
            assert "CHECKS" not in _defines(path), (
                f"{path.name} defines CHECKS but {package.__name__} does not name it"
            )


def test_the_verification_loads_every_public_module_of_the_visible_package_before_any_cell():
    """What the relay loads before the student's cells (inside/relay.py _load_check_packages: a
    Registry of each of Course.check_packages) is every public module of course_lib/checks, as the
    folder's listing loaded them: the seal covers the modules loaded then (_Seal), so one left
    unloaded (rules) would be imported later, unsealed, after the student's code; and the
    grading-only loaders must be there for the hidden cases' inputs."""
    code = (
        "import sys\nfrom course_lib.checks.engine import Registry\n"
        f"for p in {Course().check_packages()!r}:\n    Registry(p).all()\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('course_lib.checks.'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=REPO
    )
    loaded = set(done.stdout.split())
    public = {
        f"course_lib.checks.{p.stem}" for p in (REPO / "course_lib" / "checks").glob("[!_]*.py")
    }
    assert public <= loaded, (public - loaded, done.stderr[-2000:])


def test_grading_only_modules_resolve_and_are_what_the_student_edition_leaves_out():
    from autograde.publish import GRADING_ONLY

    assert GRADING_ONLY_MODULES and all(importlib.import_module(m) for m in GRADING_ONLY_MODULES)
    assert GRADING_ONLY == {"course_lib/checks/toy_inputs.py"}
    assert Course().check_packages() == ["course_lib.checks", *GRADING_ONLY_MODULES]


def test_the_visible_registry_needs_no_grading_only_module_as_in_the_student_edition(monkeypatch):
    from course_lib.checks.engine import Registry

    for m in GRADING_ONLY_MODULES:
        monkeypatch.setitem(sys.modules, m, None)  # as if the file were absent
    assert len(Registry("course_lib.checks").all()) == len(Course().visible_registry().all())


def test_the_course_registries_hold_the_checks_of_every_registered_module():
    course = Course()
    for registry, package in (
        (course.visible_registry(), course_lib.checks),
        (course.hidden_registry(), hidden),
    ):
        modules = {m.__name__ for _, m in registry.all()}
        assert modules == {f"{package.__name__}.{n}" for n in package.CHECK_MODULES}


def _generated() -> dict[str, str]:
    """{check: strategy name} over every hidden module's GENERATED."""
    out = {}
    for name in hidden.CHECK_MODULES:
        for check, (strategy, _count) in getattr(
            importlib.import_module(f"autograde.hidden.{name}"), "GENERATED", {}
        ).items():
            out[check] = strategy
    return out


def test_every_strategy_a_hidden_module_names_resolves_and_every_registered_strategy_is_used():
    from autograde import strategies

    used = _generated()
    assert used, "no hidden module declares generated cases"
    unknown = {c: s for c, s in used.items() if s not in strategies.STRATEGIES}
    assert not unknown, f"strategies not in autograde.strategies.STRATEGIES: {unknown}"
    assert set(strategies.STRATEGIES) == set(used.values()), (
        "registered but used by no hidden module"
    )
    for name, factory in strategies.STRATEGIES.items():
        assert name == factory.__name__ and hasattr(factory(), "example"), name


def test_every_call_strategy_in_the_module_is_registered():
    from autograde import strategies

    calls = {n for n in _defines(REPO / "autograde" / "strategies.py") if n.endswith("_call")}
    assert calls == set(strategies.STRATEGIES)


# -------------------------------------------------------------------------------------------
# test-cell calls
def test_every_registered_test_call_is_a_function_of_the_course_package_it_names():
    from autograde.checkcalls import TEST_CALLS

    course = Course()
    for kind, field in TEST_CALLS.items():
        assert callable(getattr(importlib.import_module(getattr(course, field)), kind)), kind


def test_every_test_cell_runs_checks_that_resolve_and_every_check_is_run_by_a_test_cell():
    """No orphan either way: a test cell that calls no check cannot be verified outside the kernel,
    and a check no cell calls (a twin aside: it is run for its visible check,
    autograde/hidden/_twins.py) is never graded."""
    from autograde.course import check_calls, is_autograded_test, nbg, read_notebook
    from autograde.hidden._twins import twins_of

    course = Course()
    registries = {"check": course.visible_registry(), "hidden_check": course.hidden_registry()}
    called = {"check": set(), "hidden_check": set()}
    for assignment in course.assignments():
        for path in course.source_notebooks(assignment):
            nb = read_notebook(path)
            calls = check_calls(nb)
            tests = {nbg(c)["grade_id"] for c in nb.cells if is_autograded_test(c)}
            assert tests == {gid for gid, _, _ in calls}, (
                f"{path.name}: test cells that call no check"
            )
            for _, kind, name in calls:
                registries[kind].get(name)  # KeyError names the known checks
                called[kind].add(name)
            called["hidden_check"] |= set(twins_of(registries["hidden_check"], calls))
    for kind, registry in registries.items():
        assert {chk.name for chk, _ in registry.all()} == called[kind], kind


def _nb(*test_sources: str, setup: str = "from course_lib.checks import check"):
    from nbformat.v4 import new_code_cell, new_notebook

    meta = [
        {
            "nbgrader": {
                "grade_id": f"t{i}",
                "grade": True,
                "solution": False,
                "locked": True,
                "points": 1,
            }
        }
        for i in range(len(test_sources))
    ]
    return new_notebook(
        cells=[new_code_cell(setup)]
        + [new_code_cell(s, metadata=m) for s, m in zip(test_sources, meta)]
    )


@pytest.mark.parametrize(
    "setup, test, expected",
    [
        (
            "from course_lib.checks import check",
            "check('softmax', softmax)",
            [("t0", "check", "softmax")],
        ),
        (
            "from course_lib.checks import check as c",
            "c('softmax', softmax)",
            [("t0", "check", "softmax")],
        ),
        (
            "from course_lib.checks import check\nc = check",
            "c('softmax', softmax)",
            [("t0", "check", "softmax")],
        ),
        (
            "import course_lib.checks as cc",
            "cc.check('softmax', softmax)",
            [("t0", "check", "softmax")],
        ),
        (
            "%matplotlib inline\nx = 1",
            "from autograde.hidden import hidden_check as h\nv = h\nv('softmax_hidden', softmax)",
            [("t0", "hidden_check", "softmax_hidden")],
        ),
        (
            "",
            "import autograde.hidden\nautograde.hidden.hidden_check('a', f)\nfor x in [1]:\n    "
            "check('b', g)",
            [("t0", "hidden_check", "a"), ("t0", "check", "b")],
        ),
        (
            "",
            "'''check('not_a_call', f)'''\n# check('nor_this', f)\ncheck('real', f)",
            [("t0", "check", "real")],
        ),
    ],
)
def test_check_calls_are_found_under_any_name_the_notebook_binds(setup, test, expected):
    from autograde.course import check_calls

    assert check_calls(_nb(test, setup=setup)) == expected


@pytest.mark.parametrize(
    "test, why",
    [
        ("name = 'softmax'\ncheck(name, softmax)", "string"),
        (
            "import functools\nrun = functools.partial(check, 'softmax')\nrun(softmax)",
            "other than by calling",
        ),
        ("import course_lib.checks as cc\ngetattr(cc, 'check')('softmax', softmax)", "getattr"),
        ("[check(n, f) for n in ('softmax', 'entropy')]", "string"),
        ("check('softmax', softmax", "not valid Python"),
        ("%time check('softmax', softmax)", "magic"),
        ("c, d = check, 1\nc('softmax', softmax)", "other than by calling"),
    ],
)
def test_a_check_call_that_cannot_be_named_stops_the_reading_instead_of_being_skipped(test, why):
    """Fail closed: a call the finder skipped would be judged only in the student's kernel."""
    from autograde.checkcalls import UnreadableTestCell
    from autograde.course import check_calls

    with pytest.raises(UnreadableTestCell, match=why):
        check_calls(_nb("check('entropy', entropy)", test))


@pytest.mark.parametrize(
    "setup", ["c, d = check, 1", "def c(name, fn):\n    return check(name, fn)", "%time c = check"]
)
def test_an_alias_made_in_another_cell_where_the_reading_cannot_follow_it_is_refused(setup):
    from autograde.checkcalls import UnreadableTestCell
    from autograde.course import check_calls

    with pytest.raises(UnreadableTestCell):
        check_calls(
            _nb("c('softmax', softmax)", setup="from course_lib.checks import check\n" + setup)
        )
