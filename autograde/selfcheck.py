"""`selfcheck`: prove the grading of every assignment before students see it.

1. notebooks/ and the stored references are up to date with solutions/ (stored == fresh
computation);
2. in one process: the reference solutions pass every check their notebook calls, and every bug-zoo
entry
   (``autograde/bugzoo/<assignment>/*.py``: a docstring, ``TARGET = "<exercise>"`` and a wrong
   definition of that function) fails at least one check of its exercise; each graded exercise has
   ``min_bugs`` entries; at least 95 % of machine-made mutants of the reference solutions are killed
   (``autograde.mutants``; the rest are listed as equivalent, with a reason, in
   ``autograde/equivalent_mutants/``), and every correct alternative answer
   (``autograde/alternatives/<assignment>/*.py``, the bug zoo's format) passes every check;
3. through the real grading pipeline (nbgrader, demo cells skipped): the instructor notebook scores
full
   marks on every autograded test with no error anywhere after all its metadata and cell ids were
   stripped (as Colab does; it must rebuild to the same cells as the unstripped notebook, so one
   grading covers both), and the untouched student notebook scores 0 on every autograded test, with
   no error outside test cells other than NotImplementedError.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograde.course import Course
from autograde.exercises import exercise_checks, memoized_models
from autograde.record import GradeRecord, Status


def stale_files(course: Course, assignments: list[str] | None = None) -> list[str]:
    """Committed student notebooks or references that differ from what `release` would write now."""
    from autograde.references import verify_references
    from autograde.release import stale_release, template

    out = []
    for a in assignments or course.assignments():
        out += stale_release(course, template(course, a))
        out += [f"references: {p}" for p in verify_references(course, a)]
    return out


def _target(path: Path) -> str | None:
    """The literal ``TARGET = "..."`` of a bug-zoo file (read without running it)."""
    for node in ast.parse(path.read_text()).body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and getattr(node.targets[0], "id", None) == "TARGET"
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            return node.value.value
    return None


def check_bugzoo(
    course: Course,
    assignment: str,
    min_bugs: int = 5,
    log=print,
    mutants: bool = False,
    min_kill_rate: float = 0.95,
) -> list[str]:
    """Problems found by evaluating the reference solutions and the bug zoo against the checks,
    in-process; with ``mutants``, also machine-made mutants of the reference solutions
    (``autograde.mutants``)."""
    problems, by_exercise = exercise_checks(course, assignment)
    if mutants:
        problems += check_mutants(course, assignment, by_exercise, log, min_kill_rate)
    problems += check_alternatives(course, assignment, by_exercise, log)
    counts = {ex: 0 for ex in by_exercise}
    with memoized_models():
        problems += _run_zoo(course, assignment, by_exercise, counts, log)
    for ex, n in sorted(counts.items()):
        if n < min_bugs:
            problems.append(
                f"exercise {ex!r} of {assignment} has {n} bug-zoo entries (want >= {min_bugs})"
            )
    return problems


def check_mutants(
    course: Course, assignment: str, by_exercise: dict, log=print, min_kill_rate: float = 0.95
) -> list[str]:
    """Kill rate of machine-made mutants (printed); a problem below ``min_kill_rate`` or for a stale
    equivalent."""
    from autograde.mutants import mutation_report

    with memoized_models():
        rep = mutation_report(course, assignment, by_exercise, log=log)
    log("  " + rep.summary())
    problems = []
    if rep.kill_rate < min_kill_rate:
        problems.append(
            f"{assignment}: only {100 * rep.kill_rate:.1f} % of machine-made mutants are killed "
            f"(want >= {100 * min_kill_rate:.0f} %); survivors (kill them, or list them as "
            "equivalent "
            f"with a reason in autograde/equivalent_mutants/{assignment}.json):\n"
            + "\n".join(f"  {v.mutant.key}" for v in rep.survivors)
        )
    problems += [
        f"{assignment}: equivalent mutant {k!r} is no longer generated (remove it)"
        for k in rep.stale_equivalents()
    ]
    return problems


def alternatives_dir(course: Course) -> Path:
    """The corpus of correct answers written to differ from the reference:
    ``<dir>/<assignment>/*.py``."""
    return Path(course.root) / "autograde" / "alternatives"


def check_alternatives(course: Course, assignment: str, by_exercise: dict, log=print) -> list[str]:
    """Every correct alternative answer (same file format as the bug zoo) must pass every check of
    its exercise."""
    from autograde.references import grading_env
    from course_lib.checks.engine import evaluate

    problems, n, t0 = [], 0, time.perf_counter()
    with memoized_models():
        for entry in sorted((alternatives_dir(course) / assignment).glob("*.py")):
            target = _target(entry)
            if target not in by_exercise:
                problems.append(
                    f"alternative {entry.name}: TARGET={target!r} is not a graded exercise of "
                    f"{assignment}"
                )
                continue
            nb_path, ns, checks = by_exercise[target]
            alt_ns = dict(ns)
            with grading_env(nb_path.parent, course.path_entries()):
                try:
                    exec(compile(entry.read_text(), str(entry), "exec"), alt_ns)
                except Exception as e:  # a broken corpus file is a selfcheck failure, not a crash
                    problems.append(
                        f"alternative {entry.name}: cannot load: {type(e).__name__}: {e}"
                    )
                    continue
                n += 1
                for chk, expected in checks:
                    r = evaluate(chk, alt_ns[target], expected, raise_on_fail=False, quiet=True)
                    if not r.passed:
                        problems.append(
                            f"correct alternative {entry.name} fails {chk.name!r}:\n{r.message}"
                        )
    log(
        f"  {assignment}: {n} correct alternative answer(s) checked, {len(problems)} problem(s) "
        f"({time.perf_counter() - t0:.1f} s)"
    )
    return problems


def _run_zoo(course: Course, assignment: str, by_exercise: dict, counts: dict, log) -> list[str]:
    """Evaluate each bug-zoo entry against the checks of its exercise; count entries per
    exercise."""
    from autograde.references import grading_env
    from course_lib.checks.engine import evaluate

    problems = []
    for entry in sorted((course.zoo_dir / assignment).glob("*.py")):
        target = _target(entry)
        if target not in by_exercise:
            problems.append(
                f"bug zoo {entry.name}: TARGET={target!r} is not a graded exercise of {assignment} "
                f"({sorted(by_exercise)})"
            )
            continue
        nb_path, ns, checks = by_exercise[target]
        bug_ns = dict(ns)  # the wrong function may call the notebook's other (reference) functions
        with grading_env(nb_path.parent, course.path_entries()):
            try:
                exec(compile(entry.read_text(), str(entry), "exec"), bug_ns)
            except Exception as e:  # a broken zoo file is a selfcheck failure, not a crash
                problems.append(f"bug zoo {entry.name}: cannot load: {type(e).__name__}: {e}")
                continue
            if bug_ns.get(target) is ns.get(target):
                problems.append(f"bug zoo {entry.name}: does not define {target!r}")
                continue
            # the first check that fails it is enough: running the rest (real-size samplers take
            # seconds) only added names to the log line and minutes to the suite
            caught = next(
                (
                    [c.name]
                    for c, x in checks
                    if not evaluate(c, bug_ns[target], x, raise_on_fail=False, quiet=True).passed
                ),
                [],
            )
        counts[target] += 1
        if caught:
            log(f"  caught {entry.name} ({target}) by {', '.join(caught)}")
        else:
            doc = (bug_ns.get("__doc__") or "").strip().splitlines()
            problems.append(
                f"bug zoo {entry.name} ({target}) passes every check{': ' + doc[0] if doc else ''}"
            )
    return problems


def _stage_notebooks(course: Course, assignments: list[str], subs: Path) -> list[str]:
    """Put each assignment's instructor notebooks, stripped of metadata, under SUBS/stripped and
    its release notebooks under SUBS/untouched; problems if a stripped copy rebuilds differently."""
    import nbformat

    from autograde.inside.sanitize import rebuild

    problems = []
    for a in assignments:
        for p in course.source_notebooks(a):
            # the same answers after an editor dropped all metadata and renumbered cell ids
            # (Colab does)
            nb = json.loads(p.read_text())
            for i, cell in enumerate(nb["cells"]):
                cell["metadata"], cell["id"] = {}, f"stripped-{i}"
            # Grading sees only the rebuilt notebook: when the instructor notebook and its
            # stripped copy rebuild to the same cells (ids aside), grading the stripped one
            # proves both (and halves the cost).
            release = nbformat.read(str(course.release_notebook(a, p.stem)), as_version=4)
            cells = [
                [(c.cell_type, c.source, c.metadata) for c in rebuild(raw, release)[0].cells]
                for raw in (p.read_bytes(), json.dumps(nb).encode())
            ]
            if cells[0] != cells[1]:
                problems.append(
                    f"{a}/{p.name}: the instructor notebook and its stripped copy rebuild "
                    "differently: grading would depend on the student's metadata"
                )
            (subs / "stripped" / a).mkdir(parents=True, exist_ok=True)
            (subs / "stripped" / a / p.name).write_text(json.dumps(nb))
            (subs / "untouched" / a).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(course.release_notebook(a, p.stem), subs / "untouched" / a / p.name)
    return problems


def _record_problems(r: dict) -> list[str]:
    """What is wrong with one self-check record: the stripped instructor notebook must score full
    marks with only the instructor's flag, the untouched one 0 with only NotImplementedErrors."""
    problems = []
    who, a = r["student"], r["assignment"]
    status = GradeRecord.from_json(r).status
    if who == "stripped":
        # the instructor's own notebook: every answer holds solution markers, and the harness
        # must say so (a hard link into solutions/ is graded as a student's otherwise); no other
        # flag is expected
        ours = [f for f in r.get("flags", []) if "the instructor" in f]
        if not ours:
            problems.append(
                f"stripped notebook of {a}: the instructor notebook was graded without the "
                "flag that it holds the instructor's text"
            )
        others = [
            c
            for c in GradeRecord.from_json(r).conditions
            if c.kind is Status.FLAGGED and "pattern(s) to look at" not in c.text
        ]
        if status is Status.FLAGGED and len(ours) == len(r.get("flags", [])) and not others:
            status = Status.NEEDS_MANUAL_GRADE
    if status not in (Status.GRADED, Status.NEEDS_MANUAL_GRADE):
        problems.append(f"{who} notebook of {a}: status {r['status']}: {r['detail']}")
    for name, nb in r["notebooks"].items():
        auto = [t for t in nb["tests"] if t["result"] in ("passed", "failed")]
        if who == "stripped":
            problems += [
                f"{who} {a}/{name}: test {t['grade_id']} scored "
                f"{t['points']:g}/{t['max_points']:g}: {t.get('error', '')}"
                for t in auto
                if t["points"] != t["max_points"]
            ]
            problems += [
                f"{who} {a}/{name}: cell {e['cell']} raised {e['ename']}"
                for e in nb["errors_outside_tests"]
            ]
        else:
            problems += [
                f"untouched {a}/{name}: test {t['grade_id']} gives {t['points']:g} free points"
                for t in auto
                if t["points"] != 0
            ]
            problems += [
                f"untouched {a}/{name}: cell {e['cell']} raised {e['ename']} "
                "(only NotImplementedError allowed)"
                for e in nb["errors_outside_tests"]
                if e["ename"] != "NotImplementedError"
            ]
    return problems


def check_notebooks(
    course: Course, assignments: list[str], workers: int = 2, log=print
) -> list[str]:
    """Grade the instructor notebooks (must be perfect) and the untouched student notebooks (must
    score 0)."""
    from autograde.grade import grade

    with tempfile.TemporaryDirectory(prefix="autograde-selfcheck-") as tmp:
        subs = Path(tmp) / "submitted"
        problems = _stage_notebooks(course, assignments, subs)
        try:
            records = grade(
                course,
                subs,
                Path(tmp) / "out",
                workers=workers,
                assignments=assignments,
                log=log,
                merge=False,
            )
        except RuntimeError as e:  # e.g. solutions/ changed since the staleness check
            return [str(e)]
        timings = [
            json.loads(line)
            for line in (Path(tmp) / "out" / "timings.jsonl").read_text().splitlines()
        ]
    for r in records:
        problems += _record_problems(r)
    for t in timings:
        log(
            f"  grading {t['student']:9s} {t['assignment']}: {t['wall_s']:.1f} s wall (kernel "
            f"{t.get('kernel', 0):.1f} s, verification {t.get('verify', 0):.1f} s)"
        )
    return problems


def selfcheck(
    course: Course,
    assignments: list[str] | None = None,
    workers: int = 2,
    min_bugs: int = 5,
    notebooks: bool = True,
    log=print,
    mutants: bool = True,
) -> bool:
    """Run every check above; print problems; True when there are none."""
    assignments = assignments or course.assignments()
    problems = []
    t0 = time.perf_counter()
    stale = stale_files(course, assignments)
    problems += [f"stale: {s} (run `python -m autograde release`)" for s in stale]
    log(f"release up to date: {not stale} ({time.perf_counter() - t0:.1f} s)")
    for a in assignments:
        t0 = time.perf_counter()
        try:
            found = check_bugzoo(course, a, min_bugs=min_bugs, log=log, mutants=mutants)
        # stale references, a check module that does not import, ...: report, go on
        except Exception as e:
            found = [f"{a}: bug zoo not checked: {type(e).__name__}: {e}"]
        problems += found
        log(
            f"{a}: reference + bug zoo{' + mutants' if mutants else ''} in-process: {len(found)} "
            f"problem(s) ({time.perf_counter() - t0:.1f} s)"
        )
    if notebooks and not stale:
        t0 = time.perf_counter()
        found = check_notebooks(course, assignments, workers=workers, log=log)
        problems += found
        log(
            f"notebooks through nbgrader: {len(found)} problem(s) "
            f"({time.perf_counter() - t0:.1f} s)"
        )
    for p in problems:
        log("PROBLEM: " + p)
    return not problems


def _cpu_of(cmd: list[str], env: dict, cwd: Path) -> tuple[float, float, int]:
    """(CPU seconds of the command and its children, wall seconds, exit code)."""
    t0 = time.monotonic()
    p = subprocess.Popen(
        cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return ru.ru_utime + ru.ru_stime, time.monotonic() - t0, p.returncode


def measure(course: Course, assignments: list[str] | None = None, log=print) -> list[dict]:
    """Core-seconds to run each instructor notebook top to bottom vs to grade it; printed and
    returned."""
    from autograde.grade import grade

    rows = []
    for a in assignments or course.assignments():
        for nb in course.source_notebooks(a):
            with tempfile.TemporaryDirectory(prefix="autograde-measure-") as tmp:
                env = dict(
                    os.environ, MPLBACKEND="Agg", PYTHONPATH=os.pathsep.join(course.path_entries())
                )
                env.pop("COURSE_GRADING", None)
                shutil.copytree(nb.parent, Path(tmp) / "run")
                cpu, wall, rc = _cpu_of(
                    [
                        sys.executable,
                        "-m",
                        "jupyter",
                        "nbconvert",
                        "--to",
                        "notebook",
                        "--execute",
                        "--ExecutePreprocessor.timeout=600",
                        "--output",
                        str(Path(tmp) / "out.ipynb"),
                        nb.name,
                    ],
                    env,
                    Path(tmp) / "run",
                )
                subs = Path(tmp) / "subs" / "reference" / a
                subs.mkdir(parents=True)
                shutil.copyfile(nb, subs / nb.name)
                grade(
                    course,
                    subs.parents[1],
                    Path(tmp) / "graded",
                    assignments=[a],
                    log=lambda *_: None,
                    merge=False,
                )
                t = json.loads(
                    (Path(tmp) / "graded" / "timings.jsonl").read_text().splitlines()[-1]
                )
            row = {
                "assignment": a,
                "notebook": nb.stem,
                "top_to_bottom_cpu_s": round(cpu, 1),
                "top_to_bottom_wall_s": round(wall, 1),
                "top_to_bottom_ok": rc == 0,
                "grading_wall_s": round(t["wall_s"], 1),
            }
            rows.append(row)
            log(json.dumps(row))
    return rows
