"""`grade`: every student in isolation, with limits, statuses, per-test details and hidden-safe
feedback.

For each (student, assignment), the four named steps of ``PIPELINE`` over a ``JobContext``
(docs/architecture.md, docs/threat-model.md):
1. intake (autograde.intake, a limited child): the submitted file is read without following links,
parsed,
   rebuilt against the release notebook (test cells restored from the release: no hidden test
   source), scanned;
2. run (autograde.inside.runner, in a sandbox): the rebuilt notebook runs top to bottom in a kernel
that sees only
   Python, course_lib, the visible checks and the model file; it reports each cell's output as text
   through its standard output. A kernel that dies (``os._exit``, a crash) costs only the cell that
   killed it;
3. verify (autograde.verify, in another sandbox): the student's functions run again on every check's
inputs;
   the expected values never enter a sandbox: the outcomes are compared here;
4. trusted pass (autograde.worker, no student code): nbgrader autogrades a throwaway course folder
that no
   sandbox ever saw, with the validated outputs put back and every check that failed outside the
   kernel marked as an error, so each cell scores the lower of the two results; then the feedback
   pages.
Everything from steps 1-3 crosses into the grader through autograde.boundary. Results are written
atomically, one JSON file per (student, assignment) in ``OUT/details/``; ``OUT/grades.csv`` is
rebuilt from them after every student, so a crash loses nothing already written, and a rerun reuses
results whose inputs did not change.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import shutil
import signal
import stat
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import nbformat

from autograde import boundary, deadlines, sandbox
from autograde.course import (
    REPO,
    SAFE_ID,
    Course,
    dump_json,
    hold,
    is_autograded_test,
    is_demo,
    is_grade,
    nbg,
    shown,
    write_atomic,
)
from autograde.forkserver import ForkServer
from autograde.grades_csv import write_csv
from autograde.inside import RUNNER
from autograde.record import Condition, GradeRecord, Status

if TYPE_CHECKING:
    from autograde.release import Template

HARNESS_VERSION = 3
SUBMISSION_LIMIT = 32 << 20  # bytes of one submitted notebook (outputs included) read at most
REPORT_LIMIT = boundary.FRAME_CAP  # bytes of one sandboxed run's report read at most
# the trusted pass runs no student code (~2 s): it gets what is left of wall_s, at
TRUSTED_PASS_MIN_S = 60.0
# least this, so a student whose run used the whole budget still gets a record; a student's row ends
# within wall_s + TRUSTED_PASS_MIN_S (a notebook built to slow nbgrader down: intake caps cells and
# characters)
SLOTS = 256  # sandbox uids FIRST_UID .. FIRST_UID + SLOTS - 1, one per job running on this machine


@dataclass(frozen=True)
class Limits:
    """Per-student limits. Memory is the kernel's address space (RLIMIT_AS), not resident memory."""

    wall_s: float = 900.0
    memory_bytes: int = 4 << 30
    file_bytes: int = 1 << 30
    cell_timeout: int | None = None  # None: the course's default (c.Execute.timeout)
    kernel_retries: int = 2
    # kernel and out-of-kernel verification in autograde.sandbox; False: unsafe
    sandbox: bool = True
    max_processes: int = 64  # processes and threads of the sandbox user (RLIMIT_NPROC)


@dataclass
class Job:
    student: str
    assignment: str
    sub_dir: Path
    late: deadlines.Lateness | None = None  # set by grade_one (autograde/deadlines.py)


_ASSIGNMENT_LINE = re.compile(rb'^ASSIGNMENT = "([^"]+)"', re.M)


def _code_fingerprint(course: Course, assignment: str | None = None) -> str:
    """Hash of the code that decides grades: the harness, the check engine, the course's check
    packages. With an assignment, a check module that names another assignment (its ``ASSIGNMENT =
    "..."`` line) is left out: an edit to 03's hidden checks regrades nobody's 02 (issue 34, item
    6). A module that names none counts for all."""
    course.ensure_importable()
    h = hashlib.sha256(str(HARNESS_VERSION).encode())
    files = sorted((REPO / "autograde").glob("*.py")) + [
        REPO / "course_lib" / "checks" / "engine.py"
    ]
    for package in (course.visible_package, course.hidden_package):
        spec = course.package_spec(package)
        if spec and spec.submodule_search_locations:
            files += sorted(
                p for d in spec.submodule_search_locations for p in Path(d).glob("*.py")
            )
        elif spec and spec.origin:
            files.append(Path(spec.origin))
    for p in files:
        text = p.read_bytes()
        named = _ASSIGNMENT_LINE.search(text)
        if assignment is not None and named is not None and named.group(1).decode() != assignment:
            continue
        h.update(str(p).encode() + b"\0" + text)
    return h.hexdigest()


def grading_part(notebook_text: str) -> bytes:
    """What of a notebook a grade depends on: each cell's type, nbgrader metadata and tags, and the
    source of code cells other than demonstrations. Markdown prose and demo cells' code are left out
    (issue 34: one word changed in a question regraded every student): no check reads them, and the
    verification does not run demo cells. The next grading that happens for another reason, or
    `--force`, shows the new text on the pages."""
    nb = json.loads(notebook_text)
    cells = [
        [
            c.get("cell_type"),
            (c.get("metadata") or {}).get("nbgrader"),
            (c.get("metadata") or {}).get("tags"),
            "".join(c.get("source", "")) if c.get("cell_type") == "code" and not is_demo(c) else "",
        ]
        for c in nb.get("cells", [])
    ]
    return json.dumps(cells, sort_keys=True).encode()


def _kill_tree(pid: int) -> None:
    import psutil

    try:
        proc = psutil.Process(pid)
        procs = proc.children(recursive=True) + [proc]
    except psutil.NoSuchProcess:
        return
    for p in procs:
        try:
            p.send_signal(signal.SIGKILL)
        except psutil.NoSuchProcess:
            pass


def _add_seconds(record: GradeRecord, step: str, seconds: float) -> None:
    """Add to a step's wall seconds in the record's timings (a notebook at a time: they add up)."""
    steps = record.extra.setdefault("worker_seconds", {})
    steps[step] = round(steps.get(step, 0) + seconds, 2)


def _holds(job: "Job") -> str:
    """What a folder with no notebook holds instead (names only, a few), so a near miss can be
    renamed: a submitted 02_logits_softmax.IPYNB, a zip and a notebook one folder down each read
    only 'no notebook found' (test_slots.py::
    test_a_folder_without_a_notebook_says_what_it_holds)."""
    try:
        names = sorted(
            p.name + ("/" if p.is_dir() and not p.is_symlink() else "")
            for p in job.sub_dir.iterdir()
        )
    except OSError:
        return ""
    if not names:
        return " (the folder is empty)"
    more = f" and {len(names) - 5} more" if len(names) > 5 else ""
    return (
        f" (it holds {', '.join(shown(n) for n in names[:5])}{more}; the grader reads "
        f"{shown(job.assignment)}.ipynb directly in that folder)"
    )


def _slot_folder(base: Path | None = None) -> Path:
    """The folder of the slot locks: one per user and machine, so that every grading run of that
    user agrees.

    Root uses /run (only root may create there); another user its XDG_RUNTIME_DIR, else a folder in
    the temp directory named after its uid. A folder that is not a real directory owned by this user
    and closed to others is refused: another local user could have made it, filled with links that
    root's grader would then follow (a red team had root empty a file that way; test_slots.py::
    test_a_non_root_grader_with_a_planted_slot_folder_is_refused_in_one_line) or with locks this
    user cannot take."""
    uid = os.geteuid()
    if base is None:
        runtime = os.environ.get("XDG_RUNTIME_DIR")
        if uid == 0 and os.path.isdir("/run") and os.access("/run", os.W_OK):
            base = Path("/run")
        elif uid != 0 and runtime and os.path.isdir(runtime):
            base = Path(runtime)
        else:
            base = Path(tempfile.gettempdir())
    folder = base / f"autograde-slots-{uid}"
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid or st.st_mode & 0o077:
        raise RuntimeError(
            f"{folder} (where grading runs share their sandbox slots) is not a folder that only "
            "this user owns and can write: someone else may have made it; remove it and grade again"
        )
    return folder


def slot_problem() -> str | None:
    """None if this user's slot folder is usable, else why not (one line, before anything is
    written)."""
    try:
        _slot_folder()
    except (RuntimeError, OSError) as e:
        return str(e)
    return None


class _Slot:
    """A sandbox slot (hence a uid) held by one job on this machine: a lock file, so processes agree
    too."""

    def __init__(self):
        import fcntl

        folder = _slot_folder()
        while True:
            for n in range(SLOTS):
                fd = os.open(
                    folder / f"{n}.lock",
                    os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                    0o600,
                )
                f = os.fdopen(fd, "r+")
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    f.close()
                    continue
                self.n, self._f = n, f
                return
            time.sleep(0.5)

    def release(self) -> None:
        self._f.close()


def _model_file() -> Path | None:
    """The course's model file if it is available (grading kernels get it read-only), else None."""
    try:
        from course_lib import weights

        return weights.fetch(progress=False).resolve()
    except Exception:  # a course without the model (the harness's own fixture) grades without it
        return None


_PRCTL = None


def _die_with_parent_fn():
    """A preexec_fn that makes the child get SIGKILL when the grader dies (a killed Dask worker,
    Ctrl-C).

    The worker runs in its own session (so that a timeout can kill its whole tree), which would
    otherwise let it outlive the grader. libc is loaded here, in the parent: the child only makes
    one system call.
    """
    global _PRCTL
    if not sys.platform.startswith("linux"):
        return None
    if _PRCTL is None:
        import ctypes

        _PRCTL = ctypes.CDLL(None, use_errno=True).prctl
    prctl = _PRCTL

    def preexec() -> None:
        prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG

    return preexec


def _take_report(
    report: dict | None,
    nb,
    name: str,
    tests: list[str],
    record: GradeRecord,
    outputs: dict,
    inside_failed: dict[str, set[str]],
) -> list[int]:
    """What the kernel's run says (cells that died or stuck, outputs, test cells that failed inside)
    into the record; the cells the verification must skip. No report: every test counts as failed
    inside."""
    if report is None:
        inside_failed[name] = set(tests)
        return []
    for i in report["died"]:
        record.add(
            Status.KERNEL_DIED, f"cell {i} of {name}.ipynb killed the kernel; graded without it"
        )
    for i in report["stuck"]:
        record.add(
            Status.TIMEOUT, f"cell {i} of {name}.ipynb could not be interrupted; graded without it"
        )
    for i, items in report["outputs"].items():
        outputs[f"{name}/{i}"] = items
        errs = [o for o in items if o["kind"] == "error"]
        where = (
            f"test {nbg(nb.cells[i]).get('grade_id')!r}"
            if is_autograded_test(nb.cells[i])
            else f"cell {i} of {name}.ipynb"
        )
        _limits_hit(errs, where, record)
        if errs and is_autograded_test(nb.cells[i]):
            inside_failed.setdefault(name, set()).add(nbg(nb.cells[i])["grade_id"])
    return sorted(set(report["died"]) | set(report["stuck"]))


def _take_verdict(verdict, name: str, record: GradeRecord) -> None:
    """The verification's conditions into the record; what its process said goes to the details
    only."""
    if verdict.stderr_tail:  # the instructor's details only: never a page the student sees
        record.extra.setdefault("verify_stderr", {})[name] = verdict.stderr_tail
    if verdict.memory_enforced_by:
        record.extra.setdefault("memory_enforced_by", {})[f"{name}/verify"] = (
            verdict.memory_enforced_by
        )
    if verdict.memory_limit:
        record.add(
            Status.MEMORY_LIMIT,
            f"the answers of {name}.ipynb, checked again, together "
            f"reached the memory limit (held by {verdict.memory_enforced_by})",
        )
    for why in verdict.tampered:
        record.add(Status.FLAGGED, f"{name}.ipynb: {why}"[:600])
    # the process's own words: the instructor's details only, never the detail
    if verdict.tamper_reports:
        record.extra.setdefault("tamper_reports", {})[name] = [
            r[:600] for r in verdict.tamper_reports[:50]
        ]


def _run_worker(
    jobdir: Path, env: dict, deadline: float, server: ForkServer | None = None
) -> tuple[int | None, float]:
    """Run the worker, forked by ``server`` where it can, else as a plain process; (exit code or
    None if the wall-clock limit struck, CPU seconds of it and its children)."""
    import subprocess

    if server is not None and server.serves(env):
        ran = server.run(jobdir, env, deadline, _kill_tree)
        if ran is not None:
            return ran

    with open(jobdir / "worker.log", "ab") as log:
        p = subprocess.Popen(
            [sys.executable, "-m", "autograde.worker", str(jobdir)],
            cwd=jobdir,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_die_with_parent_fn(),
        )
    timed_out = False
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline and not timed_out:
            _kill_tree(p.pid)
            timed_out = True
        time.sleep(0.05)
    p.returncode = os.waitstatus_to_exitcode(status)
    cpu = ru.ru_utime + ru.ru_stime
    return (None if timed_out else p.returncode), cpu


# ----------------------------------------------------------------------------------------- the
# pipeline One job's grading is a declared list of named steps (as nbgrader's converters declare
# their preprocessors) over a context that carries what each step leaves for the next: ``PIPELINE``
# below, run by ``Grader._grade_in``. A step that decides the record is final (a wall-clock limit,
# nothing left to grade) sets ``ctx.stopped``; the steps after it do not run and the record is
# finished as it stands.


@dataclass
class NotebookRun:
    """One notebook between the run and the verification: its rebuilt text and what the kernel's run
    said."""

    name: str
    text: str
    nb: nbformat.NotebookNode
    code_cells: set[int]
    tests: list[str]  # grade_ids of its autograded test cells
    report: dict | None = None  # the kernel's run, read back (None: unreadable)
    # cells the verification must not run (killed or stuck)
    skipped: list[int] = field(default_factory=list)

    @classmethod
    def of(cls, name: str, text: str) -> "NotebookRun":
        nb = nbformat.reads(text, as_version=4)
        return cls(
            name,
            text,
            nb,
            {i for i, c in enumerate(nb.cells) if c.cell_type == "code"},
            [nbg(c)["grade_id"] for c in nb.cells if is_autograded_test(c)],
        )


# what a job's sandboxes are made with: (policy, read-only paths, environment)
SandboxSetup = tuple[sandbox.Policy, list[Path], dict[str, str]]


@dataclass
class JobContext:
    """What one job's steps share: the job, its folders and limits, and what each step has found so
    far."""

    job: Job
    template: Template  # the assignment's notebooks and gradebook
    work: Path  # the job's private folder (no sandbox ever sees it)
    record: GradeRecord
    maxes: dict[str, dict[str, float]]
    present: dict[str, bytes]  # notebook name -> the submitted bytes
    slot: "_Slot | None"  # None: --no-sandbox
    deadline: float  # time.monotonic() at which the wall-clock limit strikes
    notebooks: dict[str, str] = field(default_factory=dict)  # intake: name -> the rebuilt text
    # intake: rules read from text
    broken_rules: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    # run: '<notebook>/<cell>' -> validated outputs
    outputs: dict[str, list] = field(default_factory=dict)
    # run: tests that failed in the kernel
    inside_failed: dict[str, set[str]] = field(default_factory=dict)
    # verify: '<notebook>/<grade_id>' -> why it failed
    failures: dict[str, str] = field(default_factory=dict)
    # run: (policy, read-only paths, environment), made once per job
    sandbox: SandboxSetup | None = None
    stopped: bool = False  # a step finished the record: the rest do not run

    @property
    def course_dir(self) -> Path:
        return self.work / "course"

    @property
    def late(self) -> deadlines.Lateness:
        """The job's lateness, which grade_one assesses before any step runs."""
        # Grader.grade_one sets it before _grade makes this context
        assert self.job.late is not None
        return self.job.late

    def stop(self, status: Status, detail: str) -> None:
        """End the pipeline here with ``status`` (the record is finished as it stands)."""
        self.record.add(status, detail)
        self.stopped = True


@dataclass(frozen=True)
class Step:
    """A named step of the pipeline: ``run(grader, ctx)``, or ``run(grader, ctx, notebook)`` once
    per notebook."""

    name: str
    run: Callable
    per_notebook: bool = False


def _intake(grader: "Grader", ctx: JobContext) -> None:
    """The throwaway course folder of the trusted pass, then each submitted notebook through the
    intake child (autograde.intake): rebuilt against the release, read for flags and broken rules.
    Nothing rebuilt: stop."""
    job, t = ctx.job, ctx.template
    sub = ctx.course_dir / "submitted" / job.student / job.assignment
    sub.mkdir(parents=True)
    shutil.copytree(t.data_dir, ctx.course_dir / "source" / job.assignment)
    shutil.copyfile(t.gradebook, ctx.course_dir / "gradebook.db")
    deadlines.into_course(ctx.course_dir, job.assignment, job.student, ctx.late)
    ctx.notebooks, ctx.broken_rules = grader._intake_all(job, t, ctx.present, ctx.record, sub)
    ctx.stopped = not ctx.notebooks


def _run(grader: "Grader", ctx: JobContext, run: NotebookRun) -> None:
    """Sandbox 1 (autograde.inside.runner): every cell in a kernel with limits; its one framed
    report read back through autograde.boundary into the record. The wall-clock limit reached:
    stop."""
    from autograde.verify import course_sandbox

    if ctx.sandbox is None:
        ctx.sandbox = (grader._sandbox_policy(), *course_sandbox(grader.course, grader._model))
    policy, readonly, env = ctx.sandbox
    record, name = ctx.record, run.name
    job_in = json.dumps(
        {
            "notebook": run.text,
            "cell_timeout": grader.limits.cell_timeout or grader.course.cell_timeout,
            "retries": grader.limits.kernel_retries,
        }
    ).encode()
    argv = [sys.executable, "-m", RUNNER]
    group = None
    if ctx.slot is not None:
        cmd, group = sandbox.command(
            argv, readonly=readonly, env=env, policy=policy, slot=ctx.slot.n, name="run"
        )
        run_env = None
    else:
        cmd, run_env = grader._unsandboxed(argv, env, ctx.work / f"scratch-{name}", policy)
    try:
        try:
            done = boundary.run(
                cmd,
                job_in,
                limit=REPORT_LIMIT,
                deadline_s=max(1.0, ctx.deadline - time.monotonic()),
                env=run_env,
                started=group.started if group is not None else None,
            )
        finally:
            if group is not None:
                record.extra.setdefault("memory_enforced_by", {})[f"{name}/run"] = group.enforced_by
                if group.hit():
                    record.add(
                        Status.MEMORY_LIMIT,
                        f"the processes of {name}.ipynb together "
                        f"reached the memory limit (held by {group.enforced_by})",
                    )
                group.close()
        _add_seconds(record, "kernel", done.seconds)
        if done.timed_out:
            return ctx.stop(
                Status.TIMEOUT,
                f"wall-clock limit of {grader.limits.wall_s:g} s reached "
                f"while running {name}.ipynb",
            )
        if done.message is None:
            raise boundary.Rejected(
                "its output was over the size limit"
                if done.over_limit
                else f"it ended ({done.returncode}) without a report"
            )
        run.report = boundary.cell_outputs(done.message, run.code_cells, limit=REPORT_LIMIT)
    except boundary.Rejected as e:
        record.add(
            Status.ERROR,
            f"the run of {name}.ipynb could not be read back ({e}); its tests count as failed",
        )
    run.skipped = _take_report(
        run.report, run.nb, name, run.tests, record, ctx.outputs, ctx.inside_failed
    )


def _verify(grader: "Grader", ctx: JobContext, run: NotebookRun) -> None:
    """Sandbox 2 (autograde.verify): the answers run again on every check's inputs, judged here,
    outside; each test cell's result outside the kernel into the record. The wall-clock limit
    reached first: stop."""
    from autograde.verify import verify_notebook

    t_verify = time.monotonic()
    if time.monotonic() >= ctx.deadline:
        return ctx.stop(
            Status.TIMEOUT,
            f"wall-clock limit of {grader.limits.wall_s:g} s reached "
            f"before {run.name}.ipynb could be checked",
        )
    assert ctx.sandbox is not None  # _run, the step before this one on the notebook, made it
    rules = ctx.broken_rules.get(run.name)
    if run.skipped:
        rules = grader._rules_without(ctx, run)
    verdict = verify_notebook(
        grader.course,
        ctx.template.source_paths[run.name],
        run.text,
        slot=ctx.slot.n if ctx.slot else 0,
        policy=ctx.sandbox[0],
        wall_s=max(1.0, ctx.deadline - time.monotonic()),
        model_file=grader._model,
        step_timeout=grader.limits.cell_timeout or grader.course.cell_timeout,
        skip_cells=tuple(run.skipped),
        sandboxed=ctx.slot is not None,
        rule_failures=rules,
    )
    _take_verdict(verdict, run.name, ctx.record)
    _add_seconds(ctx.record, "verify", time.monotonic() - t_verify)
    for gid in run.tests:
        _judge_test(ctx, run, gid, verdict)


def _judge_test(ctx: JobContext, run: NotebookRun, gid: str, verdict) -> None:
    """One test cell's result outside the kernel: passed, or why it failed (for the trusted pass to
    mark), the hidden checks' full messages for the instructor, and a flag when the kernel and the
    verification disagree."""
    record, key = ctx.record, f"{run.name}/{gid}"
    ok = verdict.cells.get(gid) is True and verdict.error is None
    inside = gid not in ctx.inside_failed.get(run.name, set())
    record.extra.setdefault("outside", {})[key] = "passed" if ok else "failed"
    if ok and run.report is None:
        ctx.failures[key] = "the notebook's run in the kernel could not be read back"
    if ok:
        return
    mine = verdict.checks_of.get(gid, [])
    why = verdict.error or "\n".join(
        verdict.public.get(n, f"{n}: failed") if n in verdict.hidden else m
        for n, m in verdict.messages.items()
        if n in mine
    )
    hidden_msgs = [m for n, m in verdict.messages.items() if n in mine and n in verdict.hidden]
    hidden_msgs += [m for n, m in verdict.twin_failures.items() if n in mine]
    if hidden_msgs:  # the full messages, for the instructor only (details/, never feedback)
        record.extra.setdefault("hidden_failures", {})[key] = "\n".join(hidden_msgs)[:4000]
    if gid not in verdict.checks_of:
        why = "this test cell calls no check, so it cannot be verified outside the kernel"
    ctx.failures[key] = (why or "failed")[:2000]
    visible = [n for n in mine if n not in verdict.hidden]
    # the kernel runs only the visible checks: disagreeing on one of those is what needs a look
    if inside and (verdict.error or any(n in verdict.messages for n in visible)):
        record.add(
            Status.FLAGGED,
            f"{gid!r} passed in the kernel but failed outside it"
            + (f" ({why.splitlines()[0][:200]})" if why else ""),
        )


def _trusted_pass(grader: "Grader", ctx: JobContext) -> None:
    """autograde.worker, no student code: nbgrader autogrades the throwaway course folder with the
    validated outputs put back and the failures outside the kernel marked, then the feedback pages;
    the scores into the record (Grader._collect). Stopped by the wall clock, or nbgrader failing:
    the record says so."""
    job, t, record, work = ctx.job, ctx.template, ctx.record, ctx.work
    release_notebooks: dict[str, str] = {}  # filled below, as each is written
    job_spec = {
        "assignment": job.assignment,
        "student": job.student,
        "notebooks": sorted(ctx.notebooks),
        "outputs": ctx.outputs,
        "failures": ctx.failures,
        "source_notebooks": {n: str(t.source_paths[n]) for n in ctx.notebooks},
        "release_notebooks": release_notebooks,
        "late_policy": ctx.late.policy,
        "late_note": ctx.late.text(with_penalty=False),
    }
    for n in ctx.notebooks:
        p = work / "release" / f"{n}.ipynb"
        p.parent.mkdir(exist_ok=True)
        p.write_text(t.notebooks[n])
        release_notebooks[n] = str(p)
    (work / "job.json").write_text(json.dumps(job_spec))
    allowed = max(ctx.deadline - time.monotonic(), TRUSTED_PASS_MIN_S)
    rc, cpu = _run_worker(work, grader._env(work), time.monotonic() + allowed, grader.forkserver)
    record.extra.setdefault("worker_seconds", {})["trusted_pass_cpu"] = round(cpu, 2)
    if rc is None:
        return ctx.stop(
            Status.TIMEOUT,
            f"nbgrader's pass over the notebook took longer than the "
            f"{allowed:.0f} s left of the wall-clock limit; it was stopped",
        )
    worker = None
    if (work / "worker.json").exists():
        worker = json.loads((work / "worker.json").read_text())
    if worker is None or not worker["autograde"]["success"]:
        err = (worker or {}).get("autograde", {}).get("error") or _tail(work / "worker.log")
        ctx.stop(Status.ERROR, "nbgrader failed: " + (err.strip().splitlines() or ["?"])[-1][:300])
        record.extra["log_tail"] = _tail(work / "worker.log", 3000)
        return
    record.extra.setdefault("worker_seconds", {}).update(worker.get("seconds", {}))
    if worker.get("leaked"):
        record.add(
            Status.FLAGGED,
            "feedback page withheld: it quoted the assignment's hidden "
            "test code (look at the autograded notebook)",
        )
    grader._collect(work, job, sorted(ctx.notebooks), ctx.maxes, record, t.source_paths)


# The pipeline (docs/architecture.md): intake, then each notebook through the run and the
# verification in turn, then the trusted pass. A step that runs per notebook is run for each rebuilt
# notebook, with the per-notebook steps next to it, before the next notebook starts.
PIPELINE: tuple[Step, ...] = (
    Step("intake", _intake),
    Step("run", _run, per_notebook=True),
    Step("verify", _verify, per_notebook=True),
    Step("trusted pass", _trusted_pass),
)


def _notebooks_listed(job: Job) -> tuple[list[Path], Condition | None]:
    """The .ipynb files in the student's folder, or why the folder is not graded."""
    if not SAFE_ID.match(job.student):  # the ids lms-import makes
        # the id becomes a folder in OUT, a row in formgrader's pages and nbgrader's path patterns:
        # glob characters, markup or a newline there break them (or worse), so such a folder is not
        # graded
        return [], Condition(
            Status.INVALID_NAME,
            f"the folder name {job.student!r} is not a student id "
            "this harness grades (letters, digits and . _ @ + -, at most 100, "
            "starting with a letter or digit): rename the folder and grade again",
        )
    if os.path.islink(job.sub_dir) or os.path.islink(job.sub_dir.parent):
        # a link could point at a classmate's folder, solutions/ or a root-only folder: never
        # followed
        return [], Condition(
            Status.INVALID_NOTEBOOK,
            "the student's folder is a link: only real folders in the submissions folder are "
            "graded",
        )
    try:
        return (
            sorted(p for p in job.sub_dir.iterdir() if p.name.endswith(".ipynb"))
            if job.sub_dir.is_dir()
            else []
        ), None
    except OSError as e:
        if os.path.lexists(job.sub_dir):
            # there, but not readable by the grader (a white-box red team's 0700 folder, graded as
            # `nobody`, read "missing"): say so, by name, instead of a wrong status
            return [], Condition(
                Status.INVALID_NOTEBOOK,
                f"the grader cannot read the folder {shown(job.student)}/{shown(job.assignment)} "
                f"({e.strerror or type(e).__name__}): make it readable by the grading user and "
                "grade again",
            )
        return [], None


def _test_entry(cell, gid: str, name: str, scores: dict, maxes: dict, record: GradeRecord) -> dict:
    """One graded cell's entry in the details record: its points from the trusted pass's
    gradebook, and for a test whether it passed (in the kernel and outside it)."""
    auto, needs = scores.get((name, gid), (None, False))
    # only automatic scores count here: manual ones come from the instructor's gradebook (export)
    score = auto if is_autograded_test(cell) else 0.0
    entry = {
        "grade_id": gid,
        "points": float(score or 0.0),
        "max_points": maxes[name].get(gid, 0.0),
        "title": _title(cell.source) if cell.cell_type == "code" else "written answer",
    }
    if is_autograded_test(cell):
        entry["outside_kernel"] = record.extra.get("outside", {}).get(f"{name}/{gid}", "failed")
        errs = [o for o in cell.get("outputs", []) if o.output_type == "error"]
        entry["result"] = (
            "passed" if not errs and entry["points"] >= entry["max_points"] else "failed"
        )
        if errs:
            # a timeout shows as CellTimeoutError; a check that failed outside the kernel as its
            # own name
            err = next((o for o in errs if o.ename == "CellTimeoutError"), errs[0])
            entry["error"] = f"{err.ename}: {err.evalue}"[:2000]
    else:
        entry["result"] = "needs_manual_grade" if needs else "graded"
        entry["answer_sha256"] = hashlib.sha256(cell.source.encode()).hexdigest()
        if needs:
            record.add(Status.NEEDS_MANUAL_GRADE, f"{gid!r} is graded by hand")
    return entry


class Grader:
    """Grades a folder of submissions into OUT (see module docstring)."""

    def __init__(
        self,
        course: Course,
        out: Path,
        limits: Limits = Limits(),
        log=print,
        given_deadlines: deadlines.Deadlines | None = None,
    ):
        self.course, self.out, self.limits, self.log = course, Path(out).resolve(), limits, log
        self.templates: dict[str, Template] = {}
        self._lock = threading.Lock()
        self._fingerprint_base = ""
        # per assignment: what its grades depend on (prepare)
        self._assignment_base: dict[str, str] = {}
        self._model: Path | None = None
        self._known: dict[str, dict] = {}
        self.deadlines = deadlines.Deadlines()
        # Gradescope's run: the course file with Gradescope's word
        self._given_deadlines = given_deadlines
        # the trusted passes' processes, while run() runs (autograde.forkserver)
        self.forkserver: ForkServer | None = None

    @property
    def fingerprint(self) -> str:
        """Hash of everything grading depends on (harness, checks, limits, notebooks); set by
        prepare()."""
        return self._fingerprint_base

    # -------------------------------------------------------------------------------------------
    # setup
    def prepare(self, assignments: list[str]) -> None:
        """Build each assignment's template gradebook; refuse to grade against stale student
        notebooks."""
        from autograde.course import tools_beside_python
        from autograde.release import stale_release, template

        tools_beside_python()  # nbgrader runs `alembic` by name
        if self.limits.sandbox and sandbox.unavailable():
            raise RuntimeError(
                f"cannot grade safely: {sandbox.unavailable()}. Student code would run as the "
                "grader, able to read hidden tests and rewrite grades; --no-sandbox grades anyway "
                "(only for code you trust)"
            )
        if self._model is None:
            self._model = _model_file()
        from autograde.intake import fingerprints

        self._known = {
            a: fingerprints(self.course.release_notebook(a, a).read_text())
            for a in self.course.assignments()
            if self.course.release_notebook(a, a).exists()
        }
        self.deadlines = (
            self._given_deadlines
            if self._given_deadlines is not None
            else deadlines.load(self.course.deadlines_file)
        )
        whole = hashlib.sha256(repr(self.limits).encode() + repr(self.course.cell_timeout).encode())
        for a in assignments:
            t = template(self.course, a)
            stale = stale_release(self.course, t)
            if stale:
                raise RuntimeError(
                    f"student notebooks are stale ({', '.join(stale)}): "
                    "run `python -m autograde release`"
                )
            self.templates[a] = t
            # what one assignment's grades depend on: an edit to another's checks or notebook
            # regrades nobody here
            h = hashlib.sha256(_code_fingerprint(self.course, a).encode())
            h.update(repr(self.limits).encode() + repr(self.course.cell_timeout).encode())
            for name in sorted(t.notebooks):
                h.update(
                    grading_part(t.notebooks[name]) + grading_part(t.source_paths[name].read_text())
                )
            ref = self.course.refs_dir / f"{a}.json"
            if ref.exists():
                h.update(ref.read_bytes())
            self._assignment_base[a] = h.hexdigest()
            whole.update(a.encode() + b"\0" + self._assignment_base[a].encode())
        self._fingerprint_base = whole.hexdigest()

    def _max_scores(self, a: str) -> dict[str, dict[str, float]]:
        t = self.templates[a]
        out = {}
        for name, text in t.notebooks.items():
            nb = nbformat.reads(text, as_version=4)
            out[name] = {
                nbg(c)["grade_id"]: float(nbg(c).get("points", 0)) for c in nb.cells if is_grade(c)
            }
        return out

    # --------------------------------------------------------------------------------------------
    # one job
    def _read_submission(
        self, job: Job, t: Template
    ) -> tuple[dict[str, bytes | None], list[str], list[Condition]]:
        """Each expected notebook's bytes (None if absent), notes, and conditions (files that can't
        be graded)."""
        raws: dict[str, bytes | None] = {n: None for n in t.notebooks}
        notes: list[str] = []
        conditions: list[Condition] = []
        found, refused = _notebooks_listed(job)
        if refused is not None:
            return raws, notes, [refused]
        for name in t.notebooks:
            p = job.sub_dir / f"{name}.ipynb"
            if not os.path.lexists(p) and len(t.notebooks) == 1 and len(found) == 1:
                p = found[0]  # e.g. "02_logits_softmax (1).ipynb" from a browser download
                notes.append(f"graded {p.name} as {name}.ipynb")
            elif not os.path.lexists(p) and len(t.notebooks) == 1 and len(found) > 1:
                conditions.append(
                    Condition(
                        Status.AMBIGUOUS,
                        f"{len(found)} notebooks and none named {name}.ipynb: "
                        + ", ".join(q.name for q in found[:10])
                        + " (keep only the one to grade)",
                    )
                )
                raws[name] = None
                continue
            raws[name] = None
            if os.path.lexists(p):
                try:
                    raws[name] = boundary.read_submission(p, SUBMISSION_LIMIT)
                except boundary.Rejected as e:
                    conditions.append(Condition(Status.INVALID_NOTEBOOK, str(e)))
        return raws, notes, conditions

    def grade_one(self, job: Job, force: bool = False) -> dict:
        """Grade one (student, assignment); returns the details record (also written to
        OUT/details).

        Whatever a submission holds, this returns a record: an exception while grading it becomes
        that student's `error` row (with the reason), and the run goes on.
        """
        t = self.templates[job.assignment]
        detail_path = self.out / "details" / job.student / f"{job.assignment}.json"
        raws, renamed, unreadable = self._read_submission(job, t)
        h = hashlib.sha256(self._assignment_base[job.assignment].encode())
        for name, raw in sorted(raws.items()):
            h.update(name.encode() + b"\0" + (raw if raw is not None else b"<missing>"))
        h.update(json.dumps([c.to_json() for c in unreadable]).encode())
        job.late = deadlines.assess_job(
            self.deadlines, job.sub_dir.parent.parent, job.student, job.assignment
        )
        h.update(job.late.key())
        fingerprint = h.hexdigest()
        if not force and detail_path.exists():
            try:
                old = json.loads(detail_path.read_text())
                if old.get("fingerprint") == fingerprint:
                    old["changed_answers"] = []  # nothing changed since: every manual mark stands
                    return old
            except ValueError:
                pass
        t0 = time.monotonic()
        (self.out / "gradebooks" / job.student / f"{job.assignment}.db").unlink(missing_ok=True)
        try:
            record = self._grade(job, t, raws, unreadable).to_json()
        except Exception as e:  # noqa: BLE001 - one student's data must never end the run
            import traceback

            with self._lock, open(self.out / "errors.log", "a") as f:
                f.write(f"--- {job.student}/{job.assignment}\n{traceback.format_exc()}\n")
            maxes = self._max_scores(job.assignment)
            record = (
                GradeRecord.start(
                    job.student, job.assignment, sum(sum(v.values()) for v in maxes.values())
                )
                .add(
                    Status.ERROR,
                    f"internal error while grading this submission ({type(e).__name__}: "
                    f"{str(e)[:200]}); "
                    "see errors.log",
                )
                .finish()
                .to_json()
            )
        # the details file's dict from here (GradeRecord.to_json): the lateness, the fingerprint,
        # OUT/details/
        record["notes"] = renamed + record["notes"]
        deadlines.settle(record, job.late, self.out)
        record["fingerprint"] = fingerprint
        record["changed_answers"] = _changed_answers(detail_path, record)
        # wall_s: the whole grading; kernel and verify: the two sandboxes' wall; startup, autograde
        # and feedback: nbgrader's trusted pass, step by step, and trusted_pass_cpu its CPU seconds
        timing = {"wall_s": round(time.monotonic() - t0, 2), **record.pop("worker_seconds", {})}
        write_atomic(detail_path, dump_json(record))
        with self._lock:
            line = json.dumps({"student": job.student, "assignment": job.assignment, **timing})
            with open(self.out / "timings.jsonl", "a") as f:
                f.write(line + "\n")
        return record

    def _grade(
        self, job: Job, t: Template, raws: dict[str, bytes | None], unreadable: list[Condition]
    ) -> GradeRecord:
        maxes = self._max_scores(job.assignment)
        max_score = sum(sum(v.values()) for v in maxes.values())
        record = GradeRecord.start(job.student, job.assignment, max_score)
        record.conditions += unreadable
        if not self.limits.sandbox:
            record.add(
                Status.UNSANDBOXED,
                "graded with --no-sandbox: the student's code ran as the "
                "grader, could read everything the grader can, and was not contained",
            )
        present = {n: r for n, r in raws.items() if r is not None}
        if not present:
            if not record.conditions:
                record.add(Status.MISSING, f"no notebook found in {job.sub_dir.name}/{_holds(job)}")
            return record.finish()
        for n in raws:
            if raws[n] is None and not unreadable:
                record.add(Status.MISSING, f"{n}.ipynb not submitted")
        work = Path(
            tempfile.mkdtemp(prefix=f"{job.student}-{job.assignment}-", dir=self.out / ".work")
        )
        os.chmod(work, 0o700)  # no sandbox ever sees it; other users must not list it either
        slot = _Slot() if self.limits.sandbox else None
        try:
            return self._grade_in(
                JobContext(
                    job,
                    t,
                    work,
                    record,
                    maxes,
                    present,
                    slot,
                    deadline=time.monotonic() + self.limits.wall_s,
                )
            )
        finally:
            # debugging the harness: keep the job folder
            if not os.environ.get("AUTOGRADE_KEEP_WORK"):
                shutil.rmtree(work, ignore_errors=True)
            if slot is not None:
                slot.release()

    def _grade_in(self, ctx: JobContext) -> GradeRecord:
        """Run ``PIPELINE`` over one job: its steps in order, a run of per-notebook steps once for
        each rebuilt notebook in turn, until a step stops the job; return the record, finished."""
        for per_notebook, group in itertools.groupby(PIPELINE, key=lambda step: step.per_notebook):
            steps = list(group)
            units = (
                (NotebookRun.of(n, text) for n, text in ctx.notebooks.items())
                if per_notebook
                else [None]
            )
            for unit in units:
                for step in steps:
                    if ctx.stopped:
                        return ctx.record.finish()
                    if unit is None:
                        step.run(self, ctx)
                    else:
                        step.run(self, ctx, unit)
        return ctx.record.finish()

    def _intake_all(
        self, job: Job, t: Template, present: dict[str, bytes], record: GradeRecord, sub: Path
    ) -> tuple[dict[str, str], dict[str, dict[str, list[str]]]]:
        """Each submitted notebook through the intake child: rebuilt text and broken rules by
        notebook name; a notebook intake refuses adds its status to the record."""
        from autograde.intake import intake
        from autograde.verify import rules_of

        rebuilt: dict[str, str] = {}
        broken_rules: dict[str, dict[str, list[str]]] = {}
        assert record.notes is not None  # GradeRecord.start's record: notes start as []
        for name, raw in sorted(present.items()):
            got = intake(
                raw,
                t.notebooks[name],
                job.assignment,
                self._known,
                scan=True,
                rules=rules_of(self.course, t.source_paths[name]),
            )
            if got.status != "ok":
                record.add(Status.parse(got.status), f"{name}.ipynb: {got.detail}")
                continue
            record.notes += [f"{name}.ipynb: {n}" for n in got.notes]
            record.flags = [
                *(record.flags or []),
                *(f"{name}.ipynb {f}" if len(present) > 1 else f for f in got.flags),
            ]
            record.flags += _instructor_text(got.notebook, t.source_paths[name])
            (sub / f"{name}.ipynb").write_text(got.notebook, encoding="utf-8")
            rebuilt[name] = got.notebook
            broken_rules[name] = got.rule_failures
        return rebuilt, broken_rules

    def _rules_without(self, ctx: JobContext, run: NotebookRun) -> dict[str, list[str]]:
        """The rules read again on the notebook the verification runs, without the cells it skips (a
        cell that killed the kernel or hung): the text read must be the text run (white-box red team
        23, D12: a last cell of honest defs ending in os.abort() was read as the answers and never
        run). Read again in the intake child; if that fails, every rule-bearing check is failed with
        the reason."""
        from autograde.intake import intake
        from autograde.verify import rules_of

        rules = rules_of(self.course, ctx.template.source_paths[run.name])
        got = intake(
            run.text.encode(),
            ctx.template.notebooks[run.name],
            ctx.job.assignment,
            self._known,
            scan=True,
            rules=rules,
            skip=run.skipped,
        )
        if got.status != "ok":
            return {
                name: [
                    "the answers could not be read again without the skipped cells "
                    f"({got.detail[:200]})"
                ]
                for name in rules
            }
        return got.rule_failures

    def _sandbox_policy(self) -> sandbox.Policy:
        return sandbox.Policy(
            memory_bytes=self.limits.memory_bytes,
            max_processes=self.limits.max_processes,
            file_bytes=self.limits.file_bytes,
            cpu_seconds=int(self.limits.wall_s) + 60,
        )

    def _unsandboxed(
        self, argv: list[str], env: dict, scratch: Path, policy: sandbox.Policy
    ) -> tuple[list[str], dict]:
        """`--no-sandbox`: the runner as a plain process of the grader, with the same rlimits
        (nothing more)."""
        scratch.mkdir(parents=True)
        full = {
            **os.environ,
            **env,
            "HOME": str(scratch),
            "TMPDIR": str(scratch),
            "AUTOGRADE_TRANSPORT": "tcp",
        }
        return (
            [
                "prlimit",
                f"--as={policy.address_space}",
                f"--fsize={policy.file_bytes}",
                f"--cpu={policy.cpu_seconds}",
                "--core=0",
                "--",
                *argv,
            ],
            full,
        )

    def _env(self, work: Path) -> dict:
        """Environment of the trusted pass (nbgrader without a kernel)."""
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("JUPYTER", "IPYTHON", "PYTHONSTARTUP"))
        }
        paths = self.course.path_entries() + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
        env.update(
            {
                "PYTHONPATH": os.pathsep.join(paths),
                "COURSE_GRADING": "1",
                "MPLBACKEND": "Agg",
                "PYTHONHASHSEED": "0",
                "JUPYTER_CONFIG_DIR": str(work / "jupyter-config"),
                "JUPYTER_RUNTIME_DIR": str(work / "runtime"),
                "IPYTHONDIR": str(work / "ipython"),
                "MPLCONFIGDIR": str(work / "mpl"),
                "PYDEVD_DISABLE_FILE_VALIDATION": "1",
                "PATH": os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""),
            }
        )
        return env

    def _collect(
        self,
        work: Path,
        job: Job,
        names: list[str],
        maxes: dict,
        record: GradeRecord,
        t_source: dict[str, Path],
    ) -> None:
        """Scores from the trusted pass's gradebook, test outcomes from its autograded notebooks,
        files to OUT.

        The trusted pass already scored every autograded cell with the lower of the two results (in
        the sandboxed kernel, outside it): nothing here is read from a folder a sandbox could write.
        """
        from nbgrader.api import Gradebook

        from autograde.course import read_notebook
        from autograde.inside.sanitize import inert_student_cells
        from autograde.rubric import with_rubrics

        course_dir = work / "course"
        scores = {}
        with Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}") as gb:
            sub = gb.find_submission(job.assignment, job.student)
            for nb in sub.notebooks:
                for g in nb.grades:
                    scores[(nb.name, g.name)] = (g.auto_score, g.needs_manual_grade)
        total = 0.0
        for name in names:
            graded = nbformat.read(
                str(course_dir / "autograded" / job.student / job.assignment / f"{name}.ipynb"), 4
            )
            tests = []
            for cell in graded.cells:
                gid = nbg(cell).get("grade_id")
                if gid is None or not is_grade(cell):
                    continue
                entry = _test_entry(cell, gid, name, scores, maxes, record)
                tests.append(entry)
                total += entry["points"]
            errors = [
                {"cell": i, "grade_id": nbg(c).get("grade_id"), "ename": o.ename}
                for i, c in enumerate(graded.cells)
                if c.cell_type == "code" and not is_grade(c)
                for o in c.get("outputs", [])
                if o.output_type == "error"
            ]
            assert record.notebooks is not None  # GradeRecord.start's record: notebooks start as {}
            record.notebooks[name] = {"tests": tests, "errors_outside_tests": errors}
            dest = self.out / "autograded" / job.student / job.assignment / f"{name}.ipynb"
            # the instructor's copy (formgrader) shows each written answer's rubric; feedback never
            # does. The student's markdown and raw cells are inert text there: formgrader renders
            # them as live HTML
            inert = inert_student_cells(
                graded, nbformat.reads(self.templates[job.assignment].notebooks[name], 4)
            )
            write_atomic(dest, nbformat.writes(with_rubrics(inert, read_notebook(t_source[name]))))
            html = course_dir / "feedback" / job.student / job.assignment / f"{name}.html"
            if html.exists():
                write_atomic(
                    self.out / "feedback" / job.student / job.assignment / f"{name}.html",
                    html.read_text(encoding="utf-8"),
                )
            elif not record.has(Status.ERROR):
                record.add(Status.ERROR, f"no feedback page could be made for {name}.ipynb")
        record.extra.pop("outside", None)
        gb_dest = self.out / "gradebooks" / job.student / f"{job.assignment}.db"
        gb_dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(course_dir / "gradebook.db", gb_dest.with_suffix(".tmp"))
        os.replace(gb_dest.with_suffix(".tmp"), gb_dest)
        record.score = round(total, 6)

    # ------------------------------------------------------------------------------------------ the
    # run
    def run(self, jobs: list[Job], workers: int = 1, force: bool = False) -> list[dict]:
        """Grade all jobs (``workers`` at a time); write grades.csv after each; return the
        records."""
        self.start_forkserver()
        try:
            return self._run(jobs, workers, force)
        finally:
            if self.forkserver is not None:
                self.forkserver.close()
                self.forkserver = None

    def start_forkserver(self) -> None:
        """Fork this grader's trusted passes from one server from now on (autograde.forkserver);
        where it cannot start, each pass starts its own process."""
        try:
            self.forkserver = ForkServer(self._env(self.out / ".work"))
        except OSError:
            self.forkserver = None

    def _run(self, jobs: list[Job], workers: int, force: bool) -> list[dict]:
        (self.out / ".work").mkdir(parents=True, exist_ok=True)
        records: dict[tuple[str, str], dict] = {}

        def one(job: Job) -> None:
            rec = self.grade_one(job, force=force)
            with self._lock:
                records[(job.student, job.assignment)] = rec
                write_csv(self.out / "grades.csv", records.values())
                self.log(
                    f"{shown(job.student)}/{shown(job.assignment)}: {rec['status']} "
                    f"{rec['score']:g}/{rec['max_score']:g}"
                )

        if workers <= 1:
            for j in jobs:
                one(j)
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                for f in [pool.submit(one, j) for j in jobs]:
                    f.result()
        write_csv(self.out / "grades.csv", records.values())
        if not os.environ.get("AUTOGRADE_KEEP_WORK"):
            shutil.rmtree(self.out / ".work", ignore_errors=True)
        return [records[k] for k in sorted(records)]


_MARKERS = re.compile(r"### (BEGIN|END) (SOLUTION|HIDDEN TESTS)")


def _instructor_text(rebuilt: str, source_path: Path) -> list[str]:
    """Flags for answer cells that hold the instructor notebook's markers (### BEGIN SOLUTION,
    hidden tests): the instructor notebook itself, e.g. through a hard link to solutions/. (Equality
    with the instructor's solution text is no evidence: a blind class of honest students wrote 16 of
    18 short answers character for character.)"""
    from autograde.course import read_notebook

    theirs = {
        nbg(c)["grade_id"]
        for c in read_notebook(source_path).cells
        if nbg(c).get("solution") and nbg(c).get("grade_id")
    }
    flags = []
    for cell in nbformat.reads(rebuilt, as_version=4).cells:
        gid = nbg(cell).get("grade_id")
        if gid not in theirs:
            continue
        if _MARKERS.search(cell.source):
            flags.append(
                f"answer {gid!r} holds the instructor notebook's solution or hidden-test markers"
            )
    return flags


def _answers(record: dict) -> dict[str, str]:
    return {
        f"{nb}/{t['grade_id']}": t["answer_sha256"]
        for nb, info in record.get("notebooks", {}).items()
        for t in info.get("tests", [])
        if "answer_sha256" in t
    }


def _changed_answers(old_path: Path, record: dict) -> list[str]:
    """Written answers ('<notebook>/<grade_id>') that differ from the previous grading's (manual
    marks to redo)."""
    try:
        old = _answers(json.loads(old_path.read_text()))
    except (OSError, ValueError):
        return []
    new = _answers(record)
    return sorted(k for k in new if k in old and old[k] != new[k])


def _limits_hit(errs: list, where: str, record: GradeRecord) -> None:
    """Record a per-cell timeout or an exhausted memory limit seen in a cell's error outputs."""
    if any(e["ename"] == "CellTimeoutError" for e in errs):
        record.add(Status.TIMEOUT, f"{where} hit the per-cell time limit")
    if any(
        e["ename"] == "MemoryError"
        or "raised MemoryError" in e["evalue"]
        or "can't allocate memory" in e["evalue"]
        for e in errs
    ):
        record.add(Status.MEMORY_LIMIT, f"{where} ran out of memory (limit reached)")


def _title(source: str) -> str:
    s = source.strip()
    for q in ('"""', "'''"):
        if s.startswith(q) and q in s[3:]:
            return s[3 : s.index(q, 3)].strip().splitlines()[0]
    return ""


def _tail(path: Path, n: int = 400) -> str:
    try:
        return path.read_text(errors="replace")[-n:]
    except OSError:
        return ""


def _names_in(folder: Path) -> list[str]:
    """The names in ``folder``, or none if it cannot be listed."""
    try:
        return [p.name for p in folder.iterdir()]
    except OSError:
        return []


def find_jobs(
    course: Course,
    submissions: Path,
    assignments: list[str] | None = None,
    students: list[str] | None = None,
) -> tuple[list[Job], list[str]]:
    """(student, assignment) pairs to grade in nbgrader's layout
    SUBMISSIONS/<student>/<assignment>/."""
    known = course.assignments()
    studs = sorted(
        p.name for p in submissions.iterdir() if p.is_dir() and not p.name.startswith(".")
    )
    if students:
        studs = [s for s in studs if s in students]
    if assignments is None:
        # one student's folder the grader cannot list must not stop the class (a white-box red team,
        # grading as a user other than root): its row says so when graded
        assignments = sorted({a for s in studs for a in _names_in(submissions / s) if a in known})
    unknown = [a for a in assignments if a not in known]
    if unknown:
        raise ValueError(f"unknown assignment(s) {unknown}; solutions/ has {known}")
    return [Job(s, a, submissions / s / a) for s in studs for a in assignments], assignments


def grade(
    course: Course,
    submissions: Path,
    out: Path,
    workers: int = 1,
    limits: Limits = Limits(),
    assignments: list[str] | None = None,
    students: list[str] | None = None,
    force: bool = False,
    log=print,
    merge: bool = True,
    given_deadlines: deadlines.Deadlines | None = None,
) -> list[dict]:
    """Grade SUBMISSIONS into OUT (grades.csv, details/, feedback/, autograded/, gradebooks/).

    ``merge``: also build OUT/gradebook.db for formgrader (selfcheck and measure skip it).
    ``given_deadlines``: due dates and policies to grade against instead of the course file's
    (autograde/gradescope.py).
    """
    jobs, assignments = find_jobs(course, Path(submissions), assignments, students)
    g = Grader(course, out, limits, log, given_deadlines)
    if limits.sandbox and sandbox.unavailable():  # refuse before anything is written
        raise RuntimeError(f"cannot grade safely: {sandbox.unavailable()}")
    if limits.sandbox and (why := slot_problem()):
        raise RuntimeError(f"cannot grade safely: {why}")
    # one writer per OUT: a course folder holds every assignment (docs/instructors.md, 4)
    with hold(g.out):
        g.prepare(assignments)
        records = g.run(jobs, workers=workers, force=force)
        if merge:
            # gradebook imports nothing of grade: no cycle
            from autograde.gradebook import merge_gradebooks

            merge_gradebooks(g, records)
    return records
