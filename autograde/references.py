"""Reference outputs for hidden checks, computed from the solutions/ notebooks (the single source of
truth).

``reference_namespace`` runs an instructor notebook's code cells in-process (an IPython shell, with
``COURSE_GRADING=1``; test cells and ``demo`` cells skipped) and returns its globals: the reference
solutions. ``compute_references`` calls them on every hidden check's cases and encodes the outputs
with the engine's tagged JSON codec; ``verify_references`` proves a stored file equals a fresh
computation.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from autograde.course import Course, check_calls, is_autograded_test, is_demo, read_notebook
from autograde.hidden import FORMAT, case_fingerprint, same_inputs
from autograde.inside.codec import decode, encode
from course_lib.checks.engine import MISSING, run_cases

_NAMESPACES: dict[tuple[str, str, str], dict] = {}


class ReferenceFailure(RuntimeError):
    """A reference solution could not be run or failed on a case."""


@contextlib.contextmanager
def grading_env(cwd: Path, paths: list[str]):
    old_env = {k: os.environ.get(k) for k in ("COURSE_GRADING", "MPLBACKEND")}
    old_cwd, old_path = os.getcwd(), list(sys.path)
    os.environ["COURSE_GRADING"], os.environ["MPLBACKEND"] = "1", "Agg"
    sys.path[:0] = [p for p in paths if p not in sys.path]
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(old_cwd)
        sys.path[:] = old_path
        for k, v in old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def reference_namespace(course: Course, notebook: Path) -> dict:
    """Globals after running the instructor notebook's code cells, except test and demo cells
    (cached)."""
    key = (str(course.root), str(notebook), hashlib.sha256(notebook.read_bytes()).hexdigest())
    if key in _NAMESPACES:
        return _NAMESPACES[key]
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    nb = read_notebook(notebook)
    shell = InteractiveShell()  # a private shell: its user_ns is the reference namespace
    with grading_env(notebook.parent, course.path_entries()):
        for i, cell in enumerate(nb.cells):
            if cell.cell_type != "code" or is_autograded_test(cell) or is_demo(cell):
                continue
            with capture_output():
                res = shell.run_cell(cell.source, silent=True, store_history=False)
            if not res.success:
                err = res.error_in_exec or res.error_before_exec
                raise ReferenceFailure(
                    f"{notebook}: code cell {i} raised {type(err).__name__}: {err}"
                )
    ns = dict(shell.user_ns)
    _NAMESPACES[key] = ns
    return ns


def compute_references(course: Course, assignment: str) -> dict:
    """Fresh reference outputs for every hidden check called by the assignment's notebooks, and for
    the twins of the visible checks they call."""
    registry = course.hidden_registry()
    checks: dict[str, Any] = {}
    from autograde.hidden._twins import twins_of

    for path in course.source_notebooks(assignment):
        calls = check_calls(read_notebook(path))
        names = sorted(
            {n for _, kind, n in calls if kind == "hidden_check"} | set(twins_of(registry, calls))
        )
        if not names:
            continue
        ns = reference_namespace(course, path)
        for name in names:
            chk = registry.get(name)
            if registry.assignment_of(name) != assignment:
                raise ReferenceFailure(
                    f"hidden check {name!r} declares ASSIGNMENT={registry.assignment_of(name)!r}, "
                    f"but {path.name} calls it"
                )
            if chk.reference_name not in ns or not callable(ns[chk.reference_name]):
                raise ReferenceFailure(
                    f"{path.name} defines no function {chk.reference_name!r} for check {name!r}"
                )
            cases = chk.cases()
            with grading_env(path.parent, course.path_entries()):
                outcomes = run_cases(chk, ns[chk.reference_name], cases)
            stored = []
            for case, out in zip(cases, outcomes):
                if case.raises is not None:
                    if case.raises not in out.raised:
                        raise ReferenceFailure(
                            f"reference {chk.reference_name} does not raise {case.raises} on case "
                            f"{case.label!r} of {name!r}"
                        )
                    stored.append({"label": case.label, **case_fingerprint(case)})
                    continue
                if out.error or out.mutated:
                    raise ReferenceFailure(
                        f"reference {chk.reference_name} failed on case {case.label!r} of "
                        f"{name!r}: {out.error or 'mutated ' + ', '.join(out.mutated)}"
                    )
                entry = {"label": case.label, **case_fingerprint(case)}
                if case.expected is MISSING:
                    entry["expected"] = encode(out.value)
                stored.append(entry)
            checks[name] = {"reference": chk.reference_name, "cases": stored}
    return {"assignment": assignment, "format": FORMAT, "checks": checks}


def _same_cases(stored: dict, fresh: dict) -> bool:
    s, f = stored["cases"], fresh["cases"]
    return len(s) == len(f) and all(
        a["label"] == b["label"] and same_inputs(a, b) for a, b in zip(s, f)
    )


def _case_problem(chk, case, sc: dict, fc: dict) -> str | None:
    """Why a stored case entry does not stand for the fresh one (None: same inputs, equal expected
    values)."""
    if sc.get("label") != fc["label"] or not same_inputs(sc, fc):
        return "stored inputs differ from the check's inputs"
    if ("expected" in sc) != ("expected" in fc):
        return "stored and fresh disagree on having an expected value"
    if "expected" in fc:
        msg = (case.compare or chk.compare)(decode(sc["expected"]), decode(fc["expected"]), case)
        if msg is not None:
            return f"stored != fresh: {msg}"
    return None


def settle_references(course: Course, stored: dict | None, fresh: dict) -> dict:
    """``fresh``, except that every stored case entry equal to its fresh one is kept byte for byte.

    Equal means what ``verify_references`` (``release --check``) means: same inputs under the
    fingerprint's tolerance and expected values equal by the check's own comparator. Recomputing a
    reference on another run or CPU changes the last bits of its floats; keeping the stored entry
    then makes an unchanged release write nothing, while any change ``release --check`` would report
    is written.
    """
    if (
        not stored
        or stored.get("format") != fresh["format"]
        or stored.get("assignment") != fresh["assignment"]
    ):
        return fresh
    registry = course.hidden_registry()
    checks = {}
    for name, f in fresh["checks"].items():
        s = stored.get("checks", {}).get(name)
        if (
            s is None
            or s.get("reference") != f["reference"]
            or len(s.get("cases", [])) != len(f["cases"])
        ):
            checks[name] = f
            continue
        chk = registry.get(name)
        kept = [
            sc if set(sc) == set(fc) and _case_problem(chk, case, sc, fc) is None else fc
            for case, sc, fc in zip(chk.cases(), s["cases"], f["cases"])
        ]
        checks[name] = {"reference": f["reference"], "cases": kept}
    return {**fresh, "checks": checks}


def verify_references(course: Course, assignment: str) -> list[str]:
    """Problems with the stored references (empty list: stored == fresh, judged by each check's
    comparator)."""
    registry = course.hidden_registry()
    fresh = compute_references(course, assignment)
    path = registry.reference_path(assignment)
    if not fresh["checks"]:
        return []
    if not path.exists():
        return [f"{path} is missing"]
    stored = json.loads(path.read_text())
    problems = []
    if set(stored.get("checks", {})) != set(fresh["checks"]):
        problems.append(
            f"{path.name}: checks {sorted(stored.get('checks', {}))} != fresh "
            f"{sorted(fresh['checks'])}"
        )
    for name, f in fresh["checks"].items():
        s = stored.get("checks", {}).get(name)
        if s is None:
            continue
        chk = registry.get(name)
        cases = chk.cases()
        if not _same_cases(s, f):
            problems.append(f"{name}: stored cases differ from the check's cases")
            continue
        for case, sc, fc in zip(cases, s["cases"], f["cases"]):
            msg = _case_problem(chk, case, sc, fc)
            if msg is not None:
                problems.append(f"{name}/{case.label}: {msg}")
    return problems
