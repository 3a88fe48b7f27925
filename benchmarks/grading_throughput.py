"""Grading throughput on a Dask LocalCluster: submissions per minute with 1 worker vs N workers,
side by side.

    python benchmarks/grading_throughput.py                      # fixture assignment, 12 students,
    1 vs 2 python benchmarks/grading_throughput.py --assignment 02_logits_softmax --students 6
    python benchmarks/grading_throughput.py --workers 4 --repeat 2
    python benchmarks/grading_throughput.py --per-student --students 3   # every real assignment, on
    one core
    python benchmarks/grading_throughput.py --forkserver --students 6 --repeat 2   # trusted pass
    forked (autograde.forkserver) vs a plain process per job, interleaved

--per-student grades every real assignment with one worker pinned to one core (the process and all
its children: sandboxes, kernels, verification) and prints the wall seconds per student-notebook
against the 15 s target of docs/scaling.md, and that core's busy seconds over the run (from
/proc/stat: everything that ran on it). On a shared machine add --isolate (root): every other
process is moved off that core for the run (and back after), so the core is the grading's alone; the
sandboxes start sessions of their own, and Linux's autogroup scheduling shares a core between
sessions equally, whatever their nice value.

Every student is a copy of a correct submission (the fixture's own answers, or the instructor
notebook of a real assignment, which scores full marks), so every run does the same work. Runs of
the same size are repeated interleaved (1, N, 1, N, ...) and the fastest of each is kept: another
process can only slow a run. Prints wall time, submissions/minute, the median wall seconds of one
grading and of its kernel and verification sandboxes (from OUT/timings.jsonl), the speed-up N
workers give over one, and what that predicts for 1,000 students on K cores (docs/scaling.md).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from autograde.cluster import grade_on_cluster  # noqa: E402
from autograde.course import Course, tools_beside_python  # noqa: E402
from autograde.grade import Limits  # noqa: E402


def fixture(work: Path, students: int) -> tuple[Course, Path, str]:
    """The tests' tiny "fx" assignment, released, with `students` correct submissions."""
    from autograde.release import release
    from autograde.tests.conftest import fixture_course, student_notebook, submit
    from autograde.tests.fixture import ASSIGNMENT, make_course

    course = fixture_course(make_course(work / "course"))
    release(course, log=lambda *_: None)
    answers = {
        "double": "def double(x):\n    return 2 * x\n",
        "square": "def square(x):\n    return x * x\n",
        "a_why": "Because 2x = x + x.",
    }
    for i in range(students):
        submit(work / "submitted", f"s{i:03d}", student_notebook(course, answers))
    return course, work / "submitted", ASSIGNMENT


def real(work: Path, assignment: str, students: int) -> tuple[Course, Path, str]:
    """A real assignment, the instructor notebook copied as every student's submission."""
    course = Course()
    src = course.solutions / assignment / f"{assignment}.ipynb"
    for i in range(students):
        dest = work / "submitted" / f"s{i:03d}" / assignment / f"{assignment}.ipynb"
        dest.parent.mkdir(parents=True)
        shutil.copyfile(src, dest)
    return course, work / "submitted", assignment


def make_class(work: Path, assignment: str, students: int) -> tuple[Course, Path, str]:
    """``fixture`` for "fx", else ``real``."""
    if assignment == "fx":
        return fixture(work, students)
    return real(work, assignment, students)


def run_once(
    course: Course, subs: Path, out: Path, assignment: str, workers: int, limits: Limits
) -> dict:
    """Grade everything on local:workers into a fresh OUT; wall seconds and per-grading CPU
    seconds."""
    shutil.rmtree(out, ignore_errors=True)
    t0 = time.perf_counter()
    records = grade_on_cluster(
        course,
        subs,
        out,
        f"local:{workers}",
        limits=limits,
        assignments=[assignment],
        log=lambda *_: None,
        merge=False,
    )
    wall = time.perf_counter() - t0
    statuses = sorted({r["status"] for r in records})
    timings = [json.loads(line) for line in (out / "timings.jsonl").read_text().splitlines()]
    return {
        "wall": wall,
        "n": len(records),
        "statuses": statuses,
        "kernel": statistics.median(t.get("kernel", 0.0) for t in timings),
        "verify": statistics.median(t.get("verify", 0.0) for t in timings),
        "task_wall": statistics.median(t["wall_s"] for t in timings),
    }


def _core_busy_s(core: int) -> float:
    """Seconds core `core` has spent not idle since boot (/proc/stat: user..steal, without idle and
    iowait)."""
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith(f"cpu{core} "):
            v = [int(x) for x in line.split()[1:]]
            return (sum(v[:8]) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")
    return float("nan")


def _isolate(core: int) -> dict[int, set[int]]:
    """Move every other thread on the machine off `core` (root); their affinities, to put back."""
    others = set(os.sched_getaffinity(0)) - {core}
    saved: dict[int, set[int]] = {}
    me = os.getpid()
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == me:
            continue
        try:
            tids = os.listdir(f"/proc/{d}/task")
        except OSError:
            continue
        for t in tids:
            try:
                saved[int(t)] = os.sched_getaffinity(int(t))
                os.sched_setaffinity(int(t), saved[int(t)] - {core} or others)
            except OSError:  # gone, or a kernel thread bound to its core
                saved.pop(int(t), None)
    return saved


TARGET_S = 15.0  # issue 18: wall seconds per student-notebook on one core


def per_student(
    students: int, repeat: int, limits: Limits, only: str | None = None, isolate: bool = False
) -> int:
    """Grade each real assignment on one core with one worker; print wall s per student-notebook."""
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})  # inherited by every child: one core in all
    saved = _isolate(core) if isolate else {}
    try:
        print(
            f"load average at start: {os.getloadavg()[0]:.2f}; pinned to core {core}"
            f"{f', {len(saved)} other threads moved off it' if isolate else ''}"
        )
        print(
            "| assignment | students | wall s per student-notebook | core busy s per "
            "student-notebook | "
            f"median wall s of one grading (kernel, verification) | statuses | <= {TARGET_S:g} s |"
        )
        print("|---|---|---|---|---|---|---|")
        worst = 0.0
        for a in sorted(
            p.name for p in Course().solutions.iterdir() if p.is_dir() and only in (None, p.name)
        ):
            with tempfile.TemporaryDirectory(prefix="grading-per-student-") as tmp:
                course, subs, _ = real(Path(tmp), a, students)
                runs = []
                for _ in range(repeat):
                    busy0 = _core_busy_s(core)
                    runs.append(run_once(course, subs, Path(tmp) / "out", a, 1, limits))
                    runs[-1]["busy"] = _core_busy_s(core) - busy0
            r = min(runs, key=lambda r: r["wall"])  # another process can only slow a run
            per = r["wall"] / r["n"]  # start-up, release copy and merge included
            worst = max(worst, per)
            print(
                f"| {a} | {r['n']} | {per:.1f} | {r['busy'] / r['n']:.1f} | {r['task_wall']:.1f} "
                f"({r['kernel']:.1f}, {r['verify']:.1f}) | {', '.join(r['statuses'])} | "
                f"{'yes' if per <= TARGET_S else 'NO'} |",
                flush=True,
            )
        print(
            f"load average at end: {os.getloadavg()[0]:.2f}; slowest {worst:.1f} s per "
            "student-notebook"
        )
    finally:
        for tid, aff in saved.items():
            try:
                os.sched_setaffinity(tid, aff)
            except OSError:
                pass
    return 0


def forkserver_ab(course: Course, subs: Path, work: Path, repeat: int, limits: Limits) -> int:
    """The trusted pass forked from autograde.forkserver against a plain process per job: the same
    class graded locally with one worker, the two interleaved (plain, forked, plain, ...), the best
    wall of each kept; prints wall s per student-notebook, the trusted pass's median CPU seconds and
    the ratios."""
    import autograde.grade as grade_module
    from autograde.grade import grade

    real_server = grade_module.ForkServer

    def no_server(env):
        raise OSError("benchmark: plain processes")

    best: dict[str, dict] = {}
    for rep in range(repeat):
        for mode in ("plain", "forked"):
            grade_module.ForkServer = real_server if mode == "forked" else no_server
            out = work / f"out-{mode}"
            shutil.rmtree(out, ignore_errors=True)
            t0 = time.perf_counter()
            records = grade(course, subs, out, workers=1, limits=limits, log=lambda *_: None)
            wall = time.perf_counter() - t0
            timings = [json.loads(t) for t in (out / "timings.jsonl").read_text().splitlines()]
            r = {
                "wall": wall,
                "n": len(records),
                "statuses": sorted({x["status"] for x in records}),
                "cpu": statistics.median(t.get("trusted_pass_cpu", 0.0) for t in timings),
                "task": statistics.median(t["wall_s"] for t in timings),
            }
            print(
                f"  run {rep + 1}, {mode}: {wall:.1f} s for {r['n']}, statuses {r['statuses']}, "
                f"trusted pass {r['cpu']:.2f} CPU s per grading",
                flush=True,
            )
            if mode not in best or wall < best[mode]["wall"]:
                best[mode] = r
    grade_module.ForkServer = real_server
    plain, forked = best["plain"], best["forked"]
    print(
        "| trusted pass | wall s per student-notebook | its CPU s (median) "
        "| grading wall s (median) |"
    )
    print("|---|---|---|---|")
    for mode, r in best.items():
        print(f"| {mode} | {r['wall'] / r['n']:.2f} | {r['cpu']:.2f} | {r['task']:.2f} |")
    print(
        f"forked / plain: wall per student {forked['wall'] / plain['wall']:.2f}, trusted pass CPU "
        f"{forked['cpu'] / max(plain['cpu'], 1e-9):.2f} (one run, interleaved, best of {repeat})"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table."""
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--assignment", default="fx", help="'fx' (the tests' fixture) or a real assignment id"
    )
    p.add_argument("--students", type=int, default=12)
    p.add_argument("--workers", type=int, default=2, help="N, compared with 1")
    p.add_argument(
        "--repeat", type=int, default=1, help="interleaved repetitions of each size (best kept)"
    )
    p.add_argument("--cell-timeout", type=int, default=300)
    p.add_argument(
        "--per-student",
        action="store_true",
        help="every real assignment, one worker on one core: wall s per student-notebook",
    )
    p.add_argument(
        "--isolate",
        action="store_true",
        help="with --per-student, as root: move every other process off the measured core for the "
        "run",
    )
    p.add_argument(
        "--forkserver",
        action="store_true",
        help="the trusted pass forked from one server against a plain process per job, side by "
        "side",
    )
    args = p.parse_args(argv)
    tools_beside_python()
    limits = Limits(wall_s=1800, cell_timeout=args.cell_timeout)
    if args.forkserver:
        with tempfile.TemporaryDirectory(prefix="grading-forkserver-") as tmp:
            work = Path(tmp)
            course, subs, _ = make_class(work, args.assignment, args.students)
            print(f"load average at start: {os.getloadavg()[0]:.2f}")
            return forkserver_ab(course, subs, work, args.repeat, limits)
    if args.per_student:
        return per_student(
            args.students,
            args.repeat,
            limits,
            None if args.assignment == "fx" else args.assignment,
            args.isolate,
        )
    print(f"load average at start: {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="grading-throughput-") as tmp:
        work = Path(tmp)
        course, subs, a = make_class(work, args.assignment, args.students)
        best: dict[int, dict] = {}
        for rep in range(args.repeat):
            for w in (1, args.workers):
                r = run_once(course, subs, work / f"out{w}", a, w, limits)
                print(
                    f"  run {rep + 1}, {w} worker(s): {r['wall']:.1f} s, {r['n']} graded, "
                    f"statuses {r['statuses']}, "
                    f"median kernel {r['kernel']:.1f} s and verification {r['verify']:.1f} s per "
                    "grading",
                    flush=True,
                )
                if w not in best or r["wall"] < best[w]["wall"]:
                    best[w] = r
    one, many = best[1], best[args.workers]
    rate1, rateN = 60 * one["n"] / one["wall"], 60 * many["n"] / many["wall"]
    speedup = rateN / rate1
    print(f"\n{a}: {args.students} students, best of {args.repeat}")
    print(
        "| workers | wall s | submissions/min | median wall s per grading (kernel, verification) |"
    )
    print("|---|---|---|---|")
    for w, r in ((1, one), (args.workers, many)):
        print(
            f"| {w} | {r['wall']:.1f} | {60 * r['n'] / r['wall']:.1f} | {r['task_wall']:.1f} "
            f"({r['kernel']:.1f}, {r['verify']:.1f}) |"
        )
    print(
        f"speed-up {args.workers} vs 1 worker: {speedup:.2f}x (efficiency "
        f"{speedup / args.workers:.2f} per worker)"
    )
    per_sub = one["wall"] / one["n"]  # one worker's wall per submission, start-up included
    eff = min(1.0, speedup / args.workers)
    print(f"1,000 students x 1 notebook, at {per_sub:.1f} s per grading and efficiency {eff:.2f}:")
    for k in (2, 16, 64, 256):
        minutes = 1000 * per_sub / (k * eff) / 60
        print(f"  {k:4d} cores: ~{minutes:.0f} min")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
