"""`grade`: every student in isolation, with limits, statuses, per-test details and hidden-safe feedback.

For each (student, assignment) the harness makes a throwaway nbgrader course (gradebook copied from the
assignment's template), writes a sanitized copy of the submission into it (submitted files are only read),
and runs ``autograde.worker`` in a fresh process under a wall-clock limit; the kernel runs under a memory
limit (``autograde.kernel``). A kernel that dies (``os._exit``, a crash) costs only the cell that killed it:
the run is repeated with that cell replaced by an error. Results are written atomically, one JSON file per
(student, assignment) in ``OUT/details/``; ``OUT/grades.csv`` is rebuilt from them after every student, so
a crash loses nothing already written, and a rerun reuses results whose inputs did not change.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograde.course import REPO, Course, dump_json, is_autograded_test, is_grade, nbg, write_atomic
from autograde.sanitize import InvalidNotebook, rebuild
from autograde.scan import scan_notebook

# most severe first: the CSV shows the first that applies, `detail` lists all
STATUSES = ["missing", "invalid_notebook", "error", "timeout", "kernel_died", "memory_limit", "flagged",
            "needs_manual_grade", "graded"]
CSV_FIELDS = ["student", "assignment", "score", "max_score", "status", "flags", "detail"]
HARNESS_VERSION = 2
SLOTS = 256  # sandbox uids FIRST_UID .. FIRST_UID + SLOTS - 1, one per job running on this machine


@dataclass(frozen=True)
class Limits:
    """Per-student limits. Memory is the kernel's address space (RLIMIT_AS), not resident memory."""

    wall_s: float = 900.0
    memory_bytes: int = 4 << 30
    file_bytes: int = 1 << 30
    cell_timeout: int | None = None   # None: the course's default (c.Execute.timeout)
    kernel_retries: int = 2
    sandbox: bool = True              # kernel and out-of-kernel verification in autograde.sandbox; False: unsafe
    max_processes: int = 64           # processes and threads of the sandbox user (RLIMIT_NPROC)


@dataclass
class Job:
    student: str
    assignment: str
    sub_dir: Path


def _code_fingerprint(course: Course) -> str:
    """Hash of the code that decides grades: the harness, the check engine, the course's check packages."""
    import importlib.util
    course.ensure_importable()
    h = hashlib.sha256(str(HARNESS_VERSION).encode())
    files = sorted((REPO / "autograde").glob("*.py")) + [REPO / "course_lib" / "checks" / "engine.py"]
    for package in (course.visible_package, course.hidden_package):
        spec = importlib.util.find_spec(package)
        if spec and spec.submodule_search_locations:
            files += sorted(p for d in spec.submodule_search_locations for p in Path(d).glob("*.py"))
        elif spec and spec.origin:
            files.append(Path(spec.origin))
    for p in files:
        h.update(str(p).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


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


def _reap(job: str) -> None:
    """Kill what a job left behind (a kernel orphaned by a crash, a student's background process).

    Found by the AUTOGRADE_JOB variable every process of the job inherits; best effort: code that clears
    its environment escapes this (the sandbox of issue 4 contains it with a pid namespace).
    """
    import psutil
    for p in psutil.process_iter(["environ"]):
        try:
            if (p.info["environ"] or {}).get("AUTOGRADE_JOB") == job and p.pid != os.getpid():
                p.kill()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass


class _Slot:
    """A sandbox slot (hence a uid) held by one job on this machine: a lock file, so processes agree too."""

    def __init__(self):
        import fcntl
        folder = Path(tempfile.gettempdir()) / "autograde-slots"
        folder.mkdir(mode=0o700, exist_ok=True)
        while True:
            for n in range(SLOTS):
                f = open(folder / f"{n}.lock", "w")
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
    """A preexec_fn that makes the child get SIGKILL when the grader dies (a killed Dask worker, Ctrl-C).

    The worker runs in its own session (so that a timeout can kill its whole tree), which would otherwise let
    it outlive the grader. libc is loaded here, in the parent: the child only makes one system call.
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


def _run_worker(jobdir: Path, env: dict, deadline: float) -> tuple[int | None, float]:
    """Run the worker; (exit code or None if the wall-clock limit struck, CPU seconds of it and its children)."""
    import subprocess
    with open(jobdir / "worker.log", "ab") as log:
        p = subprocess.Popen([sys.executable, "-m", "autograde.worker", str(jobdir)], cwd=jobdir, env=env,
                             stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                             preexec_fn=_die_with_parent_fn())
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


class Grader:
    """Grades a folder of submissions into OUT (see module docstring)."""

    def __init__(self, course: Course, out: Path, limits: Limits = Limits(), log=print):
        self.course, self.out, self.limits, self.log = course, Path(out).resolve(), limits, log
        self.templates: dict = {}
        self._lock = threading.Lock()
        self._fingerprint_base = ""
        self._model: Path | None = None

    @property
    def fingerprint(self) -> str:
        """Hash of everything grading depends on (harness, checks, limits, notebooks); set by prepare()."""
        return self._fingerprint_base

    # ------------------------------------------------------------------------------------------- setup
    def prepare(self, assignments: list[str]) -> None:
        """Build each assignment's template gradebook; refuse to grade against stale student notebooks."""
        from autograde import sandbox
        from autograde.release import stale_release, template
        if self.limits.sandbox and sandbox.unavailable():
            raise RuntimeError(f"cannot grade safely: {sandbox.unavailable()}. Student code would run as the "
                               "grader, able to read hidden tests and rewrite grades; --no-sandbox grades anyway "
                               "(only for code you trust)")
        if self.limits.sandbox and self._model is None:
            self._model = _model_file()
        h = hashlib.sha256(_code_fingerprint(self.course).encode())
        h.update(repr(self.limits).encode() + repr(self.course.cell_timeout).encode())
        for a in assignments:
            t = template(self.course, a)
            stale = stale_release(self.course, t)
            if stale:
                raise RuntimeError(f"student notebooks are stale ({', '.join(stale)}): "
                                   "run `python -m autograde release`")
            self.templates[a] = t
            for name in sorted(t.notebooks):
                h.update(t.notebooks[name].encode() + t.source_paths[name].read_bytes())
            ref = self.course.refs_dir / f"{a}.json"
            if ref.exists():
                h.update(ref.read_bytes())
        self._fingerprint_base = h.hexdigest()

    def _max_scores(self, a: str) -> dict[str, dict[str, float]]:
        t = self.templates[a]
        out = {}
        for name, text in t.notebooks.items():
            nb = nbformat.reads(text, as_version=4)
            out[name] = {nbg(c)["grade_id"]: float(nbg(c).get("points", 0)) for c in nb.cells if is_grade(c)}
        return out

    # -------------------------------------------------------------------------------------------- one job
    def grade_one(self, job: Job, force: bool = False) -> dict:
        """Grade one (student, assignment); returns the details record (also written to OUT/details)."""
        t = self.templates[job.assignment]
        detail_path = self.out / "details" / job.student / f"{job.assignment}.json"
        raws: dict[str, bytes | None] = {}
        renamed = []
        for name in t.notebooks:
            p = job.sub_dir / f"{name}.ipynb"
            found = sorted(job.sub_dir.glob("*.ipynb")) if job.sub_dir.is_dir() else []
            if not p.is_file() and len(t.notebooks) == 1 and len(found) == 1:
                p = found[0]  # e.g. "02_logits_softmax (1).ipynb" from a browser download
                renamed.append(f"graded {p.name} as {name}.ipynb")
            raws[name] = p.read_bytes() if p.is_file() else None
        h = hashlib.sha256(self._fingerprint_base.encode())
        for name in sorted(raws):
            h.update(name.encode() + b"\0" + (raws[name] if raws[name] is not None else b"<missing>"))
        fingerprint = h.hexdigest()
        if not force and detail_path.exists():
            old = json.loads(detail_path.read_text())
            if old.get("fingerprint") == fingerprint:
                return old
        t0 = time.monotonic()
        (self.out / "gradebooks" / job.student / f"{job.assignment}.db").unlink(missing_ok=True)
        record = self._grade(job, t, raws)
        record["notes"] = renamed + record["notes"]
        record["fingerprint"] = fingerprint
        timing = {"wall_s": round(time.monotonic() - t0, 2), "cpu_s": round(record.pop("cpu_s", 0.0), 2),
                  **record.pop("worker_seconds", {})}
        write_atomic(detail_path, dump_json(record))
        with self._lock:
            line = json.dumps({"student": job.student, "assignment": job.assignment, **timing})
            with open(self.out / "timings.jsonl", "a") as f:
                f.write(line + "\n")
        return record

    def _grade(self, job: Job, t, raws: dict[str, bytes | None]) -> dict:
        maxes = self._max_scores(job.assignment)
        max_score = sum(sum(v.values()) for v in maxes.values())
        record = {"student": job.student, "assignment": job.assignment, "max_score": max_score, "score": 0.0,
                  "conditions": [], "notes": [], "notebooks": {}, "cpu_s": 0.0}
        present = {n: r for n, r in raws.items() if r is not None}
        if not present:
            record["conditions"].append(["missing", f"no notebook found in {job.sub_dir.name}/"])
            return _finish(record)
        for n in raws:
            if raws[n] is None:
                record["conditions"].append(["missing", f"{n}.ipynb not submitted"])
        work = Path(tempfile.mkdtemp(prefix=f"{job.student}-{job.assignment}-", dir=self.out / ".work"))
        os.chmod(work, 0o700)  # other sandboxes (other uids) must not even list it
        slot = _Slot() if self.limits.sandbox else None
        sockets = None
        try:
            if slot is not None:
                from autograde import sandbox
                sockets = sandbox.socket_folder()
            return self._grade_in(work, job, t, present, maxes, record, slot, sockets)
        finally:
            if sockets is not None:
                shutil.rmtree(sockets, ignore_errors=True)
            if not os.environ.get("AUTOGRADE_KEEP_WORK"):  # debugging the harness: keep the job folder
                shutil.rmtree(work, ignore_errors=True)
            if slot is not None:
                slot.release()

    def _grade_in(self, work: Path, job: Job, t, present: dict, maxes: dict, record: dict, slot,
                  sockets: Path | None) -> dict:
        course_dir = work / "course"
        sub = course_dir / "submitted" / job.student / job.assignment
        sub.mkdir(parents=True)
        shutil.copytree(t.data_dir, course_dir / "source" / job.assignment)
        shutil.copyfile(t.gradebook, course_dir / "gradebook.db")
        graded_names = []
        for name, raw in sorted(present.items()):
            try:
                nb, notes = rebuild(raw, nbformat.reads(t.notebooks[name], as_version=4))
            except (InvalidNotebook, nbformat.ValidationError) as e:
                record["conditions"].append(["invalid_notebook", f"{name}.ipynb: {e}"])
                continue
            record["notes"] += [f"{name}.ipynb: {n}" for n in notes]
            record.setdefault("flags", []).extend(f"{name}.ipynb {f}" if len(present) > 1 else f
                                                  for f in scan_notebook(nb))
            nbformat.write(nb, str(sub / f"{name}.ipynb"))
            graded_names.append(name)
        if not graded_names:
            return _finish(record)
        kernels = work / "jupyter" / "kernels" / "autograde-python"
        kernels.mkdir(parents=True)
        argv = [sys.executable, "-m", "autograde.kernel", "-f", "{connection_file}"]
        if slot is not None:
            (work / "runtime").mkdir()
            (work / "kernel-sandbox.json").write_text(json.dumps(self._kernel_spec(slot.n, work, sockets)))
            argv[3:3] = ["--sandbox", str(work / "kernel-sandbox.json")]
        (kernels / "kernel.json").write_text(json.dumps({
            "argv": argv, "display_name": "Python 3 (grading)", "language": "python",
            # a sandboxed kernel is not the process the client started: interrupt it by message, not signal
            "interrupt_mode": "message"}))
        job_spec = {"assignment": job.assignment, "student": job.student, "notebooks": graded_names,
                    "ipc": str(sockets / "kernel") if sockets is not None else None,
                    "cell_timeout": self.limits.cell_timeout or self.course.cell_timeout, "skip_cells": {},
                    "source_notebooks": {n: str(t.source_paths[n]) for n in graded_names},
                    "release_notebooks": {}}
        for n in graded_names:
            p = work / "release" / f"{n}.ipynb"
            p.parent.mkdir(exist_ok=True)
            p.write_text(t.notebooks[n])
            job_spec["release_notebooks"][n] = str(p)
        env = self._env(work)
        deadline = time.monotonic() + self.limits.wall_s
        worker = None
        for attempt in range(self.limits.kernel_retries + 1):
            (work / "job.json").write_text(json.dumps(job_spec))
            for f in ("state.json", "worker.json"):
                (work / f).unlink(missing_ok=True)
            rc, cpu = _run_worker(work, env, deadline)
            _reap(str(work))
            record["cpu_s"] += cpu
            state = json.loads((work / "state.json").read_text()) if (work / "state.json").exists() else {}
            if rc is None:
                where = f" (running cell {state['running']} of {state['notebook']}.ipynb)" if state else ""
                record["conditions"].append(["timeout", f"wall-clock limit of {self.limits.wall_s:g} s reached{where}"])
                return _finish(record)
            if state.get("died") or state.get("stuck"):
                key = f"{state['notebook']}/{state['running']}"
                where = f"cell {state['running']} of {state['notebook']}.ipynb"
                if state.get("died"):
                    reason = ("the kernel died while running this cell (os._exit, a crash, or a signal); "
                              "the cell was skipped and the rest of the notebook graded without it")
                    record["conditions"].append(["kernel_died", f"{where} killed the kernel; graded without it"])
                else:
                    reason = ("this cell did not stop when interrupted at its time limit; "
                              "the cell was skipped and the rest of the notebook graded without it")
                    record["conditions"].append(["timeout", f"{where} could not be interrupted; graded without it"])
                job_spec["skip_cells"][key] = reason
                continue
            worker = json.loads((work / "worker.json").read_text()) if (work / "worker.json").exists() else None
            break
        if worker is None or not worker["autograde"]["success"]:
            err = (worker or {}).get("autograde", {}).get("error") or _tail(work / "worker.log")
            record["conditions"].append(["error", "nbgrader failed: " + err.strip().splitlines()[-1][:300]])
            record["log_tail"] = _tail(work / "worker.log", 3000)
            return _finish(record)
        record["worker_seconds"] = worker.get("seconds", {})
        if worker.get("leaked"):
            record["conditions"].append(["error", "feedback withheld: it quoted hidden test lines"])
        verdicts = {}
        if slot is not None:
            t0 = time.monotonic()
            for name in graded_names:
                skipped = tuple(int(k.rsplit("/", 1)[1]) for k in job_spec["skip_cells"] if k.startswith(f"{name}/"))
                verdicts[name] = self._verify(work, t, name, sub / f"{name}.ipynb", slot.n,
                                              max(30.0, deadline - time.monotonic()), skipped)
            record.setdefault("worker_seconds", {})["verify"] = round(time.monotonic() - t0, 2)
        self._collect(work, job, graded_names, maxes, record, verdicts)
        return _finish(record)

    def _sandbox_policy(self):
        from autograde import sandbox
        return sandbox.Policy(memory_bytes=self.limits.memory_bytes, max_processes=self.limits.max_processes,
                              file_bytes=self.limits.file_bytes, cpu_seconds=int(self.limits.wall_s) + 60)

    def _kernel_spec(self, slot: int, work: Path, sockets: Path) -> dict:
        """What autograde.kernel --sandbox needs: slot, job folder, limits, read-only folders, environment."""
        import dataclasses

        from autograde.verify import course_sandbox
        readonly, env = course_sandbox(self.course, self._model)
        if not str(self.course.refs_dir.resolve()).startswith(str(REPO / "autograde")):
            readonly.append(self.course.refs_dir)  # in-kernel hidden checks read their references
        env.update({"PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1",
                    "JUPYTER_RUNTIME_DIR": "/tmp/jupyter/runtime", "JUPYTER_DATA_DIR": "/tmp/jupyter/data",
                    "JUPYTER_CONFIG_DIR": "/tmp/jupyter/config", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
                    "AUTOGRADE_MEMORY_BYTES": str(self.limits.memory_bytes),
                    "AUTOGRADE_FILE_BYTES": str(self.limits.file_bytes)})
        return {"slot": slot, "root": str(work), "runtime": str(sockets),
                "policy": dataclasses.asdict(self._sandbox_policy()),
                "readonly": [str(p) for p in readonly], "env": env, "hide": []}

    def _verify(self, work: Path, t, name: str, submission: Path, slot: int, wall_s: float,
                skip_cells: tuple[int, ...] = ()):
        """Out-of-kernel verdict of one notebook (autograde.verify): its own sandbox, the kernel's skipped cells."""
        from autograde.verify import verify_notebook
        return verify_notebook(self.course, t.source_paths[name], submission, work / f"verify-{name}", slot=slot,
                               policy=self._sandbox_policy(), wall_s=wall_s, model_file=self._model,
                               step_timeout=self.limits.cell_timeout or self.course.cell_timeout,
                               skip_cells=skip_cells)

    def _env(self, work: Path) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "IPYTHON", "PYTHONSTARTUP"))}
        paths = self.course.path_entries() + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
        env.update({
            "PYTHONPATH": os.pathsep.join(paths), "COURSE_GRADING": "1", "MPLBACKEND": "Agg", "PYTHONHASHSEED": "0",
            "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
            "JUPYTER_PATH": str(work / "jupyter"), "JUPYTER_RUNTIME_DIR": str(work / "runtime"),
            "JUPYTER_CONFIG_DIR": str(work / "jupyter-config"), "IPYTHONDIR": str(work / "ipython"),
            "MPLCONFIGDIR": str(work / "mpl"), "PYDEVD_DISABLE_FILE_VALIDATION": "1",
            "AUTOGRADE_JOB": str(work), "AUTOGRADE_MEMORY_BYTES": str(self.limits.memory_bytes),
            "AUTOGRADE_FILE_BYTES": str(self.limits.file_bytes),
            "PATH": os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""),
        })
        return env

    def _collect(self, work: Path, job: Job, names: list[str], maxes: dict, record: dict, verdicts: dict) -> None:
        """Scores from the student's gradebook, test outcomes from the autograded notebooks, files to OUT.

        With an out-of-kernel verdict, an autograded cell scores the lower of the two results (the gradebook
        copy is lowered to match) and a disagreement flags the submission for review.
        """
        from nbgrader.api import Gradebook

        course_dir = work / "course"
        scores = {}
        with Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}") as gb:
            sub = gb.find_submission(job.assignment, job.student)
            for nb in sub.notebooks:
                for g in nb.grades:
                    scores[(nb.name, g.name)] = (g.auto_score, g.needs_manual_grade)
        total = 0.0
        lowered: dict[tuple[str, str], float] = {}
        for name in names:
            graded = nbformat.read(str(course_dir / "autograded" / job.student / job.assignment / f"{name}.ipynb"), 4)
            tests = []
            for cell in graded.cells:
                gid = nbg(cell).get("grade_id")
                if gid is None or not is_grade(cell):
                    continue
                auto, needs = scores.get((name, gid), (None, False))
                # only automatic scores count here: manual ones come from the instructor's gradebook (export)
                score = auto if is_autograded_test(cell) else 0.0
                entry = {"grade_id": gid, "points": float(score or 0.0), "max_points": maxes[name].get(gid, 0.0),
                         "title": _title(cell.source) if cell.cell_type == "code" else "written answer"}
                verdict = verdicts.get(name)
                if is_autograded_test(cell) and verdict is not None and gid in verdict.cells:
                    outside = verdict.cells[gid] and verdict.error is None
                    entry["outside_kernel"] = "passed" if outside else "failed"
                    inside = entry["points"] >= entry["max_points"] > 0
                    if inside != outside:
                        why = (verdict.error or "; ".join(m.splitlines()[0] for n, m in verdict.messages.items()
                                                          if n in verdict.checks_of.get(gid, [])))
                        record["conditions"].append(["flagged", f"{gid!r} {'passed' if inside else 'failed'} in the "
                                                     f"kernel but {'failed' if inside else 'passed'} outside it"
                                                     + (f" ({why[:200]})" if why and inside else "")])
                    if not outside and entry["points"] > 0:
                        lowered[(name, gid)] = 0.0
                        entry["points"] = 0.0
                if is_autograded_test(cell):
                    errs = [o for o in cell.get("outputs", []) if o.output_type == "error"]
                    entry["result"] = "passed" if not errs and entry["points"] >= entry["max_points"] else "failed"
                    if errs:
                        # a timeout shows as the kernel's KeyboardInterrupt followed by nbgrader's CellTimeoutError
                        err = next((o for o in errs if o.ename == "CellTimeoutError"), errs[0])
                        entry["error"] = f"{err.ename}: {err.evalue}"[:2000]
                        _limits_hit(errs, f"test {gid!r}", record)
                else:
                    entry["result"] = "needs_manual_grade" if needs else "graded"
                    if needs:
                        record["conditions"].append(["needs_manual_grade", f"{gid!r} is graded by hand"])
                tests.append(entry)
                total += entry["points"]
            for i, cell in enumerate(graded.cells):
                if cell.cell_type == "code" and not is_grade(cell):
                    _limits_hit([o for o in cell.get("outputs", []) if o.output_type == "error"],
                                f"cell {i} of {name}.ipynb", record)
            errors = [{"cell": i, "grade_id": nbg(c).get("grade_id"), "ename": o.ename}
                      for i, c in enumerate(graded.cells) if c.cell_type == "code" and not is_grade(c)
                      for o in c.get("outputs", []) if o.output_type == "error"]
            record["notebooks"][name] = {"tests": tests, "errors_outside_tests": errors}
            dest = self.out / "autograded" / job.student / job.assignment / f"{name}.ipynb"
            write_atomic(dest, nbformat.writes(graded))
            html = course_dir / "feedback" / job.student / job.assignment / f"{name}.html"
            if html.exists():
                write_atomic(self.out / "feedback" / job.student / job.assignment / f"{name}.html",
                             html.read_text(encoding="utf-8"))
        if lowered:
            with Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}") as gb:
                for (nb_name, gid), value in lowered.items():
                    g = gb.find_grade(gid, nb_name, job.assignment, job.student)
                    g.auto_score = value
                gb.db.commit()
        gb_dest = self.out / "gradebooks" / job.student / f"{job.assignment}.db"
        gb_dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(course_dir / "gradebook.db", gb_dest.with_suffix(".tmp"))
        os.replace(gb_dest.with_suffix(".tmp"), gb_dest)
        record["score"] = round(total, 6)

    # ------------------------------------------------------------------------------------------ the run
    def run(self, jobs: list[Job], workers: int = 1, force: bool = False) -> list[dict]:
        """Grade all jobs (``workers`` at a time); write grades.csv after each; return the records."""
        (self.out / ".work").mkdir(parents=True, exist_ok=True)
        records: dict[tuple[str, str], dict] = {}

        def one(job: Job) -> None:
            rec = self.grade_one(job, force=force)
            with self._lock:
                records[(job.student, job.assignment)] = rec
                write_csv(self.out / "grades.csv", records.values())
                self.log(f"{job.student}/{job.assignment}: {rec['status']} {rec['score']:g}/{rec['max_score']:g}")

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


def _limits_hit(errs: list, where: str, record: dict) -> None:
    """Record a per-cell timeout or an exhausted memory limit seen in a cell's error outputs."""
    if any(e.ename == "CellTimeoutError" for e in errs):
        record["conditions"].append(["timeout", f"{where} hit the per-cell time limit"])
    if any(e.ename == "MemoryError" or "raised MemoryError" in str(e.evalue) or "can't allocate memory" in str(e.evalue)
           for e in errs):
        record["conditions"].append(["memory_limit", f"{where} ran out of memory (limit reached)"])


def _title(source: str) -> str:
    s = source.strip()
    for q in ('"""', "'''"):
        if s.startswith(q) and q in s[3:]:
            return s[3:s.index(q, 3)].strip().splitlines()[0]
    return ""


def _tail(path: Path, n: int = 400) -> str:
    try:
        return path.read_text(errors="replace")[-n:]
    except OSError:
        return ""


def _finish(record: dict) -> dict:
    conds = record["conditions"]
    kinds = [k for k, _ in conds]
    if record.get("flags") and "flagged" not in kinds:
        conds.append(["flagged", f"{len(record['flags'])} pattern(s) to look at (see flags)"])
        kinds.append("flagged")
    record["status"] = next((s for s in STATUSES if s in kinds), "graded")
    seen, detail = set(), []
    for k, d in conds:
        if (k, d) not in seen and k != "needs_manual_grade":
            seen.add((k, d))
            detail.append(d)
    manual = [d for k, d in conds if k == "needs_manual_grade"]
    if manual:
        detail.append(f"{len(manual)} answer(s) to grade by hand")
    record["detail"] = "; ".join(detail)
    return record


def write_csv(path: Path, records) -> None:
    """grades.csv: one row per (student, assignment), sorted, atomically replaced."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, lineterminator="\n")
    w.writeheader()
    for r in sorted(records, key=lambda r: (r["student"], r["assignment"])):
        w.writerow({"student": r["student"], "assignment": r["assignment"], "score": f"{r['score']:g}",
                    "max_score": f"{r['max_score']:g}", "status": r["status"],
                    "flags": "; ".join(r.get("flags", [])), "detail": r["detail"]})
    write_atomic(path, buf.getvalue())


def find_jobs(course: Course, submissions: Path, assignments: list[str] | None = None,
              students: list[str] | None = None) -> tuple[list[Job], list[str]]:
    """(student, assignment) pairs to grade in nbgrader's layout SUBMISSIONS/<student>/<assignment>/."""
    known = course.assignments()
    studs = sorted(p.name for p in submissions.iterdir() if p.is_dir() and not p.name.startswith("."))
    if students:
        studs = [s for s in studs if s in students]
    if assignments is None:
        assignments = sorted({a.name for s in studs for a in (submissions / s).iterdir() if a.name in known})
    unknown = [a for a in assignments if a not in known]
    if unknown:
        raise ValueError(f"unknown assignment(s) {unknown}; solutions/ has {known}")
    return [Job(s, a, submissions / s / a) for s in studs for a in assignments], assignments


def grade(course: Course, submissions: Path, out: Path, workers: int = 1, limits: Limits = Limits(),
          assignments: list[str] | None = None, students: list[str] | None = None, force: bool = False,
          log=print, merge: bool = True) -> list[dict]:
    """Grade SUBMISSIONS into OUT (grades.csv, details/, feedback/, autograded/, gradebooks/).

    ``merge``: also build OUT/gradebook.db for formgrader (selfcheck and measure skip it).
    """
    jobs, assignments = find_jobs(course, Path(submissions), assignments, students)
    g = Grader(course, out, limits, log)
    g.out.mkdir(parents=True, exist_ok=True)
    g.prepare(assignments)
    records = g.run(jobs, workers=workers, force=force)
    if merge:
        from autograde.gradebook import merge_gradebooks
        merge_gradebooks(g, records)
    return records
