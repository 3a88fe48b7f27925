"""Machine-made wrong answers: mutation testing of the reference solutions against the checks,
in-process.

The bug zoo measures the checks against the bugs their authors imagined; mutants measure them
against bugs nobody imagined. Each mutant is the reference definition of one graded exercise with
one small syntactic change (an operator, a comparison, a constant, a method such as
``argmax``/``argmin``, a removed ``.clone()`` or ``generator=`` keyword, a ``raise`` turned into
``pass``, a negated ``if``), compiled into a copy of the reference notebook's namespace and run
against every check of its exercise, exactly as a bug-zoo entry is. A mutant is *killed* when at
least one check fails (or it runs past its time limit); a mutant that survives must either be killed
by a better check or be recorded as *equivalent* (no input the exercise allows tells it apart from
the reference) in ``autograde/equivalent_mutants/<assignment>.json`` as ``{key: reason}``.

Why our own AST mutator rather than mutmut or cosmic-ray: both mutate files on disk and judge a
mutant by running a test command (pytest) in a new process per mutant; our "code under test" lives
in notebook cells and our "tests" are data-driven checks that need the loaded model, so a mutant is
cheapest as one ``exec`` of the changed function in the already-loaded namespace (no process, no
model reload). The operators below are the union of mutmut's and cosmic-ray's core operators that
apply to this code, plus tensor-specific ones.
"""

from __future__ import annotations

import ast
import copy
import json
import linecache
import math
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BINOPS = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
}
CMPOPS = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
# method/attribute names swapped for a plausible wrong neighbour
ATTRS = {
    "argmax": "argmin",
    "argmin": "argmax",
    "max": "min",
    "min": "max",
    "amax": "amin",
    "amin": "amax",
    "sum": "mean",
    "mean": "sum",
    "float32": "float16",
    "float64": "float32",
    "log": "log2",
    "log_softmax": "softmax",
    "softmax": "log_softmax",
    "cumsum": "cumprod",
    "exp": "exp2",
    "isinf": "isnan",
    "isneginf": "isposinf",
    "topk": "kthvalue",
    "tril": "triu",
    "triu": "tril",
    "sort": "argsort",
    "ge": "gt",
    "gt": "ge",
    "le": "lt",
    "lt": "le",
    "append": "insert",
}
# calls that only copy or convert: removing them is a plausible wrong answer (aliasing, dtype)
DROP_CALLS = {"clone", "copy", "float", "double", "contiguous", "detach", "tolist", "item"}
# keywords whose removal changes the contract (generator, dtype, device, shape)
DROP_KEYWORDS = {
    "generator",
    "dtype",
    "device",
    "keepdim",
    "descending",
    "stable",
    "dim",
    "largest",
}


@dataclass(frozen=True)
class Mutant:
    """One changed definition of an exercise: ``key`` names the change stably, ``source`` is the new
    code."""

    exercise: str
    key: str
    source: str


def _sites(tree: ast.AST) -> Iterator[tuple[int, ast.AST]]:
    """Every node in a fixed order, numbered (the number finds the node again in a fresh copy)."""
    yield from enumerate(ast.walk(tree))


def _docstring_nodes(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            ids.add(id(body[0].value))
    return ids


def _set(name: str, value) -> Callable[[ast.AST], None]:
    def f(n):
        setattr(n, name, value)

    return f


def _constant_edits(v) -> list[tuple[str, Callable[[ast.AST], ast.AST | None]]]:
    """Edits of a constant (not a docstring): a bool flipped, an int moved by one, a float doubled,
    -inf made finite."""
    out: list = []
    if isinstance(v, bool):
        out.append((f"{v} -> {not v}", _set("value", not v)))
    elif isinstance(v, int):
        out.append((f"{v} -> {v + 1}", _set("value", v + 1)))
        if v > 0:
            out.append((f"{v} -> {v - 1}", _set("value", v - 1)))
    elif isinstance(v, float) and math.isfinite(v):
        new = 1.0 if v == 0 else v * 2
        out.append((f"{v!r} -> {new!r}", _set("value", new)))
    elif isinstance(v, str) and v in ("-inf", "inf"):
        out.append((f"{v!r} -> finite", lambda n: ast.Constant(-1e9 if n.value == "-inf" else 1e9)))
    return out


def _call_edits(node: ast.Call) -> list[tuple[str, Callable[[ast.AST], ast.AST | None]]]:
    """Edits of a call: a no-argument method such as .float() dropped, a keyword such as dim=
    dropped."""
    out: list = []
    f = node.func
    if (
        isinstance(f, ast.Attribute)
        and f.attr in DROP_CALLS
        and not node.args
        and not node.keywords
    ):
        out.append((f"drop .{f.attr}()", lambda n: n.func.value))
    for k, kw in enumerate(node.keywords):
        if kw.arg in DROP_KEYWORDS:

            def g(n, k=k):
                del n.keywords[k]

            out.append((f"drop {kw.arg}=", g))
    return out


def _edits(
    node: ast.AST, parents: dict[int, ast.AST], docs: set[int]
) -> list[tuple[str, Callable[[ast.AST], ast.AST | None]]]:
    """(description, edit) pairs for one node; an edit changes the node in place or returns its
    replacement."""
    out: list = []
    setattr_ = _set
    if isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in BINOPS:
        new = BINOPS[type(node.op)]
        out.append((f"{type(node.op).__name__} -> {new.__name__}", setattr_("op", new())))
    elif isinstance(node, ast.Compare):
        for k, op in enumerate(node.ops):
            if type(op) in CMPOPS:

                def f(n, k=k, new=CMPOPS[type(op)]):
                    n.ops[k] = new()

                out.append((f"{type(op).__name__} -> {CMPOPS[type(op)].__name__}", f))
    elif isinstance(node, ast.BoolOp):
        flipped = ast.Or if isinstance(node.op, ast.And) else ast.And
        out.append((f"{type(node.op).__name__} -> {flipped.__name__}", setattr_("op", flipped())))
    elif (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, (ast.Not, ast.USub))
        and not isinstance(node.operand, ast.Constant)
    ):
        out.append((f"drop {type(node.op).__name__}", lambda n: n.operand))
    elif isinstance(node, ast.Constant) and id(node) not in docs:
        out += _constant_edits(node.value)
    elif isinstance(node, ast.Attribute) and node.attr in ATTRS:
        out.append((f".{node.attr} -> .{ATTRS[node.attr]}", setattr_("attr", ATTRS[node.attr])))
    if isinstance(node, ast.Call):
        out += _call_edits(node)
    elif isinstance(node, ast.Raise):
        out.append(("raise -> pass", lambda n: ast.Pass()))
    elif isinstance(node, (ast.Break, ast.Continue)):
        out.append((f"{type(node).__name__.lower()} -> pass", lambda n: ast.Pass()))
    elif isinstance(node, (ast.If, ast.While)):

        def neg(n):
            n.test = ast.UnaryOp(ast.Not(), n.test)

        out.append((f"negate {type(node).__name__.lower()} condition", neg))
    return out


def _replace(parent: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for name, value in ast.iter_fields(parent):
        if value is old:
            setattr(parent, name, new)
            return
        if isinstance(value, list):
            for i, v in enumerate(value):
                if v is old:
                    value[i] = new
                    return
    raise AssertionError("node not found under its parent")


def _snippet(node: ast.AST) -> str:
    try:
        s = ast.unparse(node).replace("\n", " ")
    except Exception:  # an odd node (an operator) has no source form of its own
        s = type(node).__name__
    return s if len(s) <= 60 else s[:57] + "..."


def mutate(source: str, exercise: str) -> list[Mutant]:
    """Every single-change mutant of the definition ``exercise`` (a function or class) in
    ``source``."""
    tree = ast.parse(source)
    defs = [
        n
        for n in tree.body
        if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == exercise
    ]
    if not defs:
        raise ValueError(f"{exercise!r} is not defined in the given source")
    base = ast.Module(body=[defs[0]], type_ignores=[])
    first_line = defs[0].lineno
    original = ast.unparse(base)
    mutants, seen_keys, seen_src = [], set(), {original}
    docs = _docstring_nodes(base)
    parents = {id(c): p for p in ast.walk(base) for c in ast.iter_child_nodes(p)}
    for i, node in _sites(base):
        for what, _ in _edits(node, parents, docs):
            fresh = copy.deepcopy(base)
            nodes = [n for _, n in _sites(fresh)]
            target = nodes[i]
            fresh_parents = {id(c): p for p in ast.walk(fresh) for c in ast.iter_child_nodes(p)}
            edit = dict(_edits(target, fresh_parents, _docstring_nodes(fresh)))[what]
            # a bare constant says little; name the expression around it
            shown = fresh_parents[id(target)] if isinstance(target, ast.Constant) else target
            before = _snippet(shown)
            result = edit(target)
            if result is not None and result is not target:
                _replace(fresh_parents[id(target)], target, result)
                after = _snippet(result if shown is target else shown)
            else:
                after = _snippet(shown)
            ast.fix_missing_locations(fresh)
            try:
                src = ast.unparse(fresh)
                compile(src, "<mutant>", "exec")
            except (SyntaxError, ValueError):
                continue
            if src in seen_src:  # two edits that write the same code are one mutant
                continue
            seen_src.add(src)
            line = getattr(node, "lineno", first_line) - first_line + 1
            key = f"{exercise} L{line}: {what}: `{before}` -> `{after}`"
            n = 2
            while key in seen_keys:
                key = f"{exercise} L{line}: {what}: `{before}` -> `{after}` #{n}"
                n += 1
            seen_keys.add(key)
            mutants.append(Mutant(exercise, key, src))
    return mutants


def exercise_source(notebook: Path, exercise: str) -> str | None:
    """The source of the code cell that defines ``exercise`` in an instructor notebook."""
    nb = json.loads(Path(notebook).read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        try:
            tree = ast.parse(src)
        except SyntaxError:
            continue
        if any(
            isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == exercise for n in tree.body
        ):
            return src
    return None


class _TimeLimit(BaseException):
    """Raised by the alarm inside a mutant that runs too long (a BaseException: the engine must not
    catch it)."""


@dataclass
class Verdict:
    """What happened to one mutant."""

    mutant: Mutant
    killed: bool
    # the check that killed it, "time limit", "does not compile", or "" if it survived
    by: str
    seconds: float


def run_mutant(
    mutant: Mutant, ns: dict, checks: list[tuple[Any, list]], time_limit_s: float
) -> Verdict:
    """Exec the mutant in a copy of the reference namespace and run its exercise's checks until one
    fails."""
    from course_lib.checks.engine import evaluate

    t0 = time.perf_counter()
    mutant_ns = dict(ns)
    name = f"<mutant {mutant.key}>"
    # the mutant's text where the readings find it, as a notebook cell's is: a mutant must be caught
    # by what it computes, not because it has no text (which breaks every rule)
    linecache.cache[name] = (len(mutant.source), None, mutant.source.splitlines(True), name)
    try:
        exec(compile(mutant.source, name, "exec"), mutant_ns)
    except Exception as e:  # a mutant that cannot even be defined is a failing answer
        return Verdict(
            mutant, True, f"does not define: {type(e).__name__}", time.perf_counter() - t0
        )

    def alarm(signum, frame):
        raise _TimeLimit()

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, time_limit_s)
    try:
        for chk, expected in checks:
            r = evaluate(chk, mutant_ns[mutant.exercise], expected, raise_on_fail=False, quiet=True)
            if not r.passed:
                return Verdict(mutant, True, chk.name, time.perf_counter() - t0)
        return Verdict(mutant, False, "", time.perf_counter() - t0)
    except _TimeLimit:
        return Verdict(mutant, True, "time limit", time.perf_counter() - t0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def equivalents_path(course, assignment: str) -> Path:
    """Where the equivalent mutants of an assignment are listed with their reasons."""
    return Path(course.root) / "autograde" / "equivalent_mutants" / f"{assignment}.json"


def load_equivalents(course, assignment: str) -> dict[str, str]:
    """{mutant key: why no allowed input tells it apart from the reference}."""
    p = equivalents_path(course, assignment)
    return json.loads(p.read_text()) if p.exists() else {}


@dataclass
class Report:
    """Mutation score of one assignment."""

    assignment: str
    verdicts: list[Verdict]
    equivalent: dict[str, str]
    seconds: float

    @property
    def counted(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.mutant.key not in self.equivalent]

    @property
    def kill_rate(self) -> float:
        c = self.counted
        return sum(v.killed for v in c) / len(c) if c else 1.0

    @property
    def survivors(self) -> list[Verdict]:
        return [v for v in self.counted if not v.killed]

    def stale_equivalents(self) -> list[str]:
        keys = {v.mutant.key for v in self.verdicts}
        return [k for k in self.equivalent if k not in keys]

    def summary(self) -> str:
        c = self.counted
        return (
            f"{self.assignment}: mutants killed {sum(v.killed for v in c)}/{len(c)} = "
            f"{100 * self.kill_rate:.1f} %"
            f" ({len(self.verdicts) - len(c)} equivalent listed; {self.seconds:.1f} s)"
        )


def mutation_report(
    course, assignment: str, by_exercise: dict, log=print, budget_s: float = 600.0
) -> Report:
    """Mutate every graded exercise of ``assignment`` and run each mutant against its exercise's
    checks.

    ``by_exercise`` maps exercise -> (notebook, reference namespace, [(check, expected values)]), as
    built by ``selfcheck.check_bugzoo``. Each mutant gets 20x the reference's own time on the checks
    (at least 5 s); the whole run stops at ``budget_s`` and counts the mutants it did not reach as
    survivors. Mutants listed as equivalent (``load_equivalents``) are not run.
    """
    from autograde.references import grading_env
    from course_lib.checks.engine import evaluate

    t_start = time.perf_counter()
    verdicts: list[Verdict] = []
    equivalent = load_equivalents(course, assignment)
    for exercise, (nb_path, ns, checks) in sorted(by_exercise.items()):
        src = exercise_source(nb_path, exercise)
        if src is None:
            log(f"  mutants: {exercise}: no defining cell found")
            continue
        mutants = mutate(src, exercise)
        with grading_env(nb_path.parent, course.path_entries()):
            t0 = time.perf_counter()
            for chk, expected in checks:
                evaluate(chk, ns[exercise], expected, raise_on_fail=False, quiet=True)
            limit = max(5.0, 20 * (time.perf_counter() - t0))
            for m in mutants:
                if m.key in equivalent:
                    # triaged by hand, not counted: running every check on a mutant that passes
                    # them all was half of 03's mutation time (mutmut and cosmic-ray skip such
                    # mutants too)
                    verdicts.append(Verdict(m, False, "not run: listed as equivalent", 0.0))
                    continue
                if time.perf_counter() - t_start > budget_s:
                    verdicts.append(Verdict(m, False, "not run: budget spent", 0.0))
                    continue
                verdicts.append(run_mutant(m, ns, checks, limit))
    return Report(assignment, verdicts, equivalent, time.perf_counter() - t_start)


def main(argv: list[str] | None = None) -> int:
    """``python -m autograde.mutants [ASSIGNMENT ...] [--survivors]``: print the kill rate per
    assignment."""
    import argparse

    from autograde.course import Course
    from autograde.exercises import exercise_checks, memoized_models

    p = argparse.ArgumentParser(prog="python -m autograde.mutants")
    p.add_argument("assignments", nargs="*")
    p.add_argument("--survivors", action="store_true", help="list the surviving mutants")
    p.add_argument("--budget-s", type=float, default=600.0)
    args = p.parse_args(argv)
    course = Course()
    ok = True
    for a in args.assignments or course.assignments():
        problems, by_exercise = exercise_checks(course, a)
        with memoized_models():
            rep = mutation_report(course, a, by_exercise, budget_s=args.budget_s)
        print(rep.summary(), flush=True)
        per: dict[str, list[int]] = {}
        for v in rep.counted:
            per.setdefault(v.mutant.exercise, [0, 0])
            per[v.mutant.exercise][0] += v.killed
            per[v.mutant.exercise][1] += 1
        print("  " + ", ".join(f"{e} {k}/{n}" for e, (k, n) in sorted(per.items())))
        if args.survivors:
            for v in rep.survivors:
                print(f"  SURVIVED {v.mutant.key}" + (f" ({v.by})" if v.by else ""))
        ok &= rep.kill_rate >= 0.95 and not problems
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
