"""Verification outside the student's kernel: run the student's answers again in a fresh sandbox, judge here.

nbgrader runs a student's code and the tests in one kernel, so code that patches `np.allclose`, installs an
input transformer or rewrites `assert` can pass anything there. Here the tests are data (course_lib.checks),
so the harness can check every autograded cell a second time without trusting the kernel:

1. child (sandboxed, `python -m autograde.verify child NOTEBOOK PAYLOADS OUT`): run the student's own code
   cells (not test cells, not `demo` cells) in a private IPython shell, call each exercise's function on the
   encoded inputs of its checks, write the outcomes as tagged JSON (never pickle). It sees no references,
   no solutions, no gradebook;
2. parent (trusted, this process): decode the outcomes, compare them with the expected values (visible
   checks' own, hidden checks' stored references) using each check's comparator.

A cell passes out of the kernel when every check its test code calls passes here. The harness then scores
each cell with the lower of the in-kernel and out-of-kernel results and flags disagreements for review.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograde import sandbox
from autograde.course import REPO, Course, check_calls, is_autograded_test, is_demo, read_notebook

OUTCOME_LIMIT = 64 << 20  # bytes of outcomes JSON we are willing to read back


@dataclass
class Verdict:
    """Out-of-kernel result of one notebook: per graded cell, did every check pass, and why not."""

    cells: dict[str, bool] = field(default_factory=dict)  # grade_id -> all its checks passed
    messages: dict[str, str] = field(default_factory=dict)  # check name -> failure message
    error: str | None = None  # the child could not run at all (then every cell counts as failed)
    seconds: float = 0.0
    checks_of: dict[str, list[str]] = field(default_factory=dict)  # grade_id -> names of the checks it calls


def _payloads(course: Course, source_nb) -> tuple[dict, dict]:
    """{check name: (exercise, payload json)} for every check the notebook's test cells call; and cell -> names."""
    from course_lib.checks.engine import encode_cases

    visible, hidden = course.visible_registry(), course.hidden_registry()
    payloads, cells = {}, {}
    for grade_id, kind, name in check_calls(source_nb):
        chk = (hidden if kind == "hidden_check" else visible).get(name)
        payloads[name] = {"exercise": chk.exercise, "payload": encode_cases(chk.cases(), chk.allow_mutation),
                          "kind": kind}
        cells.setdefault(grade_id, []).append(name)
    return payloads, cells


def _judge(course: Course, name: str, kind: str, outcomes_json: str):
    from course_lib.checks.engine import CheckResult, Outcome, judge

    registry = course.hidden_registry() if kind == "hidden_check" else course.visible_registry()
    chk = registry.get(name)
    cases = chk.cases()
    try:
        outcomes = [Outcome.from_json(d) for d in json.loads(outcomes_json)]
    except (ValueError, TypeError, KeyError) as e:
        return CheckResult(name, len(cases), [("*", f"unreadable outcomes: {e}")])
    expected = (registry.expected_values(name, cases) if kind == "hidden_check" else [c.expected for c in cases])
    return judge(chk, cases, outcomes, expected)


def course_sandbox(course: Course, model_file: Path | None) -> tuple[list[Path], dict[str, str]]:
    """What any sandbox running a course's student code needs: read-only folders and environment.

    Shared by this module's child and the grading kernel (grade.Grader._kernel_spec), which add their own.
    """
    readonly = [REPO / "course_lib", REPO / "autograde", *[Path(p) for p in course.pythonpath]]
    env = {"PYTHONPATH": os.pathsep.join(course.path_entries()), "COURSE_GRADING": "1", "MPLBACKEND": "Agg",
           "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "IPYTHONDIR": "/tmp/ipython", "MPLCONFIGDIR": "/tmp/mpl"}
    if model_file is not None:
        readonly.append(model_file)
        env["COURSE_MODEL_FILE"] = str(model_file)
    return readonly, env


def verify_notebook(course: Course, source: Path, submission: Path, workdir: Path, *, slot: int = 0,
                    policy: sandbox.Policy = sandbox.Policy(), wall_s: float = 600.0,
                    model_file: Path | None = None, step_timeout: float = 120.0,
                    skip_cells: tuple[int, ...] = ()) -> Verdict:
    """Run the submission's answers in a fresh sandbox and judge every check of its graded cells here.

    step_timeout: seconds each of the student's cells, and each check's calls, may run (as nbgrader's cell
    timeout), so that one endless loop costs only its own answer.
    skip_cells: indices of cells not to run, as in the kernel (they killed it, or ignored its interrupt): a
    cell that crashes its process would otherwise cost every answer here, not only its own.
    """
    t0 = time.perf_counter()
    source_nb = read_notebook(source)
    payloads, cells = _payloads(course, source_nb)
    verdict = Verdict(cells={g: False for g in cells}, checks_of=cells)
    if not payloads:
        return verdict
    work = workdir / "verify"
    work.mkdir(parents=True, exist_ok=True)
    nb_copy = work / "submission.ipynb"
    nb_copy.write_bytes(submission.read_bytes())
    (work / "payloads.json").write_text(json.dumps(payloads))
    sandbox.prepare_writable(work, slot)
    readonly, env = course_sandbox(course, model_file)
    env.update({"AUTOGRADE_STEP_TIMEOUT": str(int(step_timeout)),
                "AUTOGRADE_SKIP_CELLS": ",".join(str(i) for i in sorted(skip_cells)),
                "AUTOGRADE_CHECK_PACKAGES": f"{course.visible_package},{course.hidden_package}"})
    argv = [sys.executable, "-m", "autograde.verify", "child", str(nb_copy), str(work / "payloads.json"),
            str(work / "outcomes.json")]
    # The references are data the child must not read: mount an empty folder over them.
    cmd = sandbox.wrap(argv, writable=work, readonly=readonly, policy=policy, slot=slot, env=env,
                       hide=[course.refs_dir, REPO / "autograde" / "references"])
    try:
        done = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=wall_s)
        rc, err = done.returncode, done.stderr[-2000:].decode(errors="replace")
    except subprocess.TimeoutExpired:
        rc, err = None, f"out-of-kernel verification ran over {wall_s:.0f} s"
    out = work / "outcomes.json"
    if not out.exists() or out.stat().st_size > OUTCOME_LIMIT:
        verdict.error = (err if rc is None else f"the verification process exited with {rc} before writing its "
                         f"results: {err.strip().splitlines()[-1] if err.strip() else 'no message'}")
        verdict.seconds = time.perf_counter() - t0
        return verdict
    try:
        results = json.loads(out.read_text())
        if not isinstance(results, dict):
            raise ValueError("not an object")
    except ValueError as e:
        verdict.error = f"unreadable verification results: {e}"
        verdict.seconds = time.perf_counter() - t0
        return verdict
    passed = {}
    for name, info in payloads.items():
        text = results.get(name)
        if not isinstance(text, str):
            passed[name] = False
            verdict.messages[name] = "no result for this check"
            continue
        result = _judge(course, name, info["kind"], text)
        passed[name] = result.passed
        if not result.passed:
            verdict.messages[name] = result.message
    verdict.cells = {g: all(passed[n] for n in names) for g, names in cells.items()}
    verdict.seconds = time.perf_counter() - t0
    return verdict


# ------------------------------------------------------------------------------------ the child (untrusted)
def _child(notebook: str, payloads_file: str, out_file: str) -> int:
    import io
    import contextlib

    import nbformat

    payloads = json.loads(Path(payloads_file).read_text())
    nb = nbformat.read(notebook, as_version=4)
    from IPython.core.interactiveshell import InteractiveShell

    import signal

    from course_lib.checks import engine
    # Check modules register the loaders of shared inputs (e.g. the model) when imported.
    packages = os.environ.get("AUTOGRADE_CHECK_PACKAGES", "course_lib.checks,autograde.hidden").split(",")
    for package in packages:
        try:
            engine.Registry(package).all()
        except Exception:  # a broken check module must not stop the other checks
            pass
    step = int(os.environ.get("AUTOGRADE_STEP_TIMEOUT", "120"))
    skip = {int(i) for i in os.environ.get("AUTOGRADE_SKIP_CELLS", "").split(",") if i}

    class StepTimeout(BaseException):  # not an Exception: the engine must not swallow it as one case's error
        pass

    def on_alarm(signum, frame):
        raise StepTimeout(f"took longer than {step} s")

    signal.signal(signal.SIGALRM, on_alarm)
    shell = InteractiveShell()
    sink = io.StringIO()

    def refuse_exit(code=0):
        raise SystemExit(f"os._exit({code}) is not allowed while checking answers")

    os._exit = refuse_exit  # a cell that kills its process must not cost the other answers their check
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or is_autograded_test(cell) or is_demo(cell) or index in skip:
            continue
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            signal.alarm(step)
            try:
                shell.run_cell(cell.source, silent=True, store_history=False)  # IPython reports its errors
            except BaseException:  # an alarm that struck between IPython's own handlers
                pass
            finally:
                signal.alarm(0)
        sink.seek(0)
        sink.truncate()
    results = {}
    hung: dict[str, str] = {}  # exercise -> the check whose call ran over the step limit
    for name, info in payloads.items():
        fn = shell.user_ns.get(info["exercise"])
        if info["exercise"] in hung:
            # as in the kernel, where the test cell stops at its first endless call: one loop costs one answer once
            why = f"StepTimeout: not run: {info['exercise']} took longer than {step} s in {hung[info['exercise']]}"
            results[name] = json.dumps([{"label": "*", "error": why, "mutated": []}])
            continue
        try:
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                signal.alarm(step)
                try:
                    results[name] = engine.run_encoded(fn, info["payload"])
                finally:
                    signal.alarm(0)
        except BaseException as e:  # the student's error (a timeout, SystemExit) is the check's outcome
            results[name] = json.dumps([{"label": "*", "error": f"{type(e).__name__}: {e}", "mutated": []}])
            if isinstance(e, StepTimeout):
                hung[info["exercise"]] = name
        sink.seek(0)
        sink.truncate()
    Path(out_file).write_text(json.dumps(results))
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"] and len(sys.argv) == 5:
        sys.exit(_child(*sys.argv[2:]))
    print("usage: python -m autograde.verify child NOTEBOOK PAYLOADS OUT", file=sys.stderr)
    sys.exit(2)
