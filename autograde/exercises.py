"""`exercises`: each graded exercise's checks with the reference solutions, in one process: what
selfcheck's bug zoo and alternatives and the machine-made mutants (autograde/mutants.py) are all run
against.

Its own module so that selfcheck and mutants, which both use it, do not import each other.
"""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from autograde.course import Course, check_calls, read_notebook

if TYPE_CHECKING:
    from course_lib.checks.engine import Check


def _checks_of(course: Course, notebook: Path) -> list[tuple[str, Check, list]]:
    """(kind, check, expected values) for every check the notebook's test cells call."""
    from autograde.hidden._twins import twins_of

    visible, hidden = course.visible_registry(), course.hidden_registry()
    out: list[tuple[str, Check, list]] = []
    seen: set[tuple[str, str]] = set()
    calls = check_calls(read_notebook(notebook))
    twins = twins_of(hidden, calls)
    for kind, name in [(kind, name) for _, kind, name in calls] + [("twin", t) for t in twins]:
        if (kind, name) in seen:
            continue
        seen.add((kind, name))
        if kind == "check":
            chk = visible.get(name)
            out.append((kind, chk, [c.expected for c in chk.cases()]))
        else:
            chk = hidden.get(name)
            out.append((kind, chk, hidden.expected_values(name)))
    return out


def exercise_checks(
    course: Course, assignment: str
) -> tuple[list[str], dict[str, tuple[Path, dict, list]]]:
    """(problems of the reference solutions, {exercise: (notebook, reference namespace, [(check,
    expected)])})."""
    from autograde.references import grading_env, reference_namespace
    from course_lib.checks.engine import evaluate

    problems: list[str] = []
    # exercise -> (notebook, namespace, its checks)
    by_exercise: dict[str, tuple[Path, dict, list]] = {}
    cost: dict[str, float] = {}  # check -> seconds the reference took on it
    for nb_path in course.source_notebooks(assignment):
        checks = _checks_of(course, nb_path)
        if not checks:
            continue
        ns = reference_namespace(course, nb_path)
        with grading_env(nb_path.parent, course.path_entries()):
            for kind, chk, expected in checks:
                fn = ns.get(chk.exercise)
                if fn is None:
                    problems.append(
                        f"reference solution defines no {chk.exercise!r} for {kind} {chk.name!r}"
                    )
                    continue
                t0 = time.perf_counter()
                r = evaluate(chk, fn, expected, raise_on_fail=False, quiet=True)
                cost[chk.name] = time.perf_counter() - t0
                if not r.passed:
                    problems.append(f"reference solution fails {kind} {chk.name!r}:\n{r.message}")
                by_exercise.setdefault(chk.exercise, (nb_path, ns, []))[2].append((chk, expected))
    for _, _, pairs in by_exercise.values():
        # cheapest first: a wrong answer (bug zoo, mutant) is caught by any failing check, so the
        # order changes no verdict, only how long the real-size cases take to reach one that is
        # caught early
        pairs.sort(key=lambda pair: cost[pair[0].name])
    return problems, by_exercise


class _MemoModel:
    """A model whose plain calls ``model(idx)`` are computed once per distinct input (selfcheck
    only).

    Dozens of wrong answers call the same deterministic model on the same texts; memoizing the
    forward pass makes the bug zoo several times faster without changing any result (outputs are
    cloned per call).
    """

    def __init__(self, model):
        self._model, self._memo = model, {}

    def __call__(self, idx, *args, **kwargs):
        import torch

        if args or kwargs or not isinstance(idx, torch.Tensor):
            return self._model(idx, *args, **kwargs)
        key = (
            str(idx.dtype),
            tuple(idx.shape),
            idx.detach().cpu().numpy().tobytes(),
            torch.is_grad_enabled(),
        )
        if key not in self._memo:
            self._memo[key] = self._model(idx)
        return self._memo[key].clone()

    def __getattr__(self, name):
        return getattr(self._model, name)


@contextlib.contextmanager
def memoized_models():
    """Within it, the check engine's cached models memoize their plain calls (_MemoModel); restored
    after."""
    from course_lib.checks import engine

    torch = sys.modules.get("torch")
    saved = dict(engine._RESOURCE_CACHE)
    if torch is not None:
        for name, value in saved.items():
            if isinstance(value, torch.nn.Module):
                engine._RESOURCE_CACHE[name] = _MemoModel(value)
    try:
        yield
    finally:
        engine._RESOURCE_CACHE.clear()
        engine._RESOURCE_CACHE.update(saved)
