"""`grade --cluster`: the same grading, one Dask task per (student, assignment), on a cluster you
already have.

The caller finds the jobs, prepares a Grader (which refuses stale notebooks), checks every worker,
submits one task per (student, assignment) and merges the results into ``OUT/grades.csv`` (and
``OUT/gradebook.db``). A task calls ``Grader.grade_one`` in the worker process, exactly as a local
run does; each worker builds and prepares its own Grader once (templates are files made by nbgrader,
not worth shipping), so OUT and the submissions must be visible from every worker at the same path
(a shared filesystem; checked up front).

Failures: an exception in a task is retried (``retries``); a worker that dies while grading (killed,
out of memory, node lost) gets its task rescheduled by the scheduler up to ``allowed-failures``
times. A task that still fails becomes an ``error`` row ("worker lost ..." or the exception) and a
``details`` file: never a missing row. Every task asks for one core and the kernel's memory limit as
Dask resources, so a worker runs only as many gradings at once as it declared ("cores" and "memory",
see docs/scaling.md).

Cluster specs: ``local:N`` (N worker processes on this machine, one thread each),
``tcp://HOST:PORT`` (a running scheduler), ``slurm`` or ``slurm:JOBS`` (dask-jobqueue's
SLURMCluster, configured in ``~/.config/dask/jobqueue.yaml``).
"""

from __future__ import annotations

import os
import shutil
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograde.course import Course, dump_json, hold, is_grade, nbg, shown, write_atomic
from autograde.grade import Grader, Job, Limits, find_jobs
from autograde.grades_csv import write_csv
from autograde.record import GradeRecord, Status

CORES, MEMORY = "cores", "memory"  # names of the Dask worker resources a grading task asks for
# reruns of a task whose code raised (the grading itself records student failures, not raises)
RETRIES = 1
# reruns of a task whose worker died under it (the scheduler's allowed-failures)
ALLOWED_FAILURES = 2
# rewrite grades.csv at most this often while results arrive (a class has thousands of rows)
CSV_EVERY_S = 2.0


@dataclass(frozen=True)
class Spec:
    """What a worker needs to build the same Grader as the caller (small and picklable)."""

    course: Course
    out: Path
    limits: Limits
    assignments: tuple[str, ...]
    # the caller's Grader fingerprint: a worker seeing other files must not grade
    fingerprint: str | None
    token: str  # contents of OUT/.cluster-<token>, proving the worker sees the caller's OUT


# ----------------------------------------------------------------------------------------------
# worker side
_GRADERS: dict[Spec, Grader] = {}
_GRADERS_LOCK = threading.Lock()


def _quiet(*_args) -> None:
    pass


def worker_grader(spec: Spec) -> Grader:
    """This worker process's Grader for spec, built and prepared on first use (templates are per
    process)."""
    with _GRADERS_LOCK:
        g = _GRADERS.get(spec)
        if g is None:
            from autograde import boundary

            # a worker process parses what sandboxes send, one task at a time (threads_per_worker=1)
            boundary.limit_memory(boundary.GRADER_BYTES + boundary.WORKER_BYTES)
            g = Grader(spec.course, spec.out, spec.limits, log=_quiet)
            # the fingerprint covers every prepared assignment: prepare the caller's list, not just
            # one
            g.prepare(list(spec.assignments))
            if spec.fingerprint and g.fingerprint != spec.fingerprint:
                raise RuntimeError(
                    "this worker sees other course files, checks or harness code than the caller "
                    "(a different checkout or environment): it must not grade"
                )
            # for the worker's life: the server ends with the worker (autograde.forkserver)
            g.start_forkserver()
            _GRADERS[spec] = g
    return g


def preflight(spec: Spec) -> dict:
    """Run on each worker before grading: can it grade, and does it see OUT? {'host', 'pid',
    'error'}."""
    import socket

    info = {"host": socket.gethostname(), "pid": os.getpid(), "error": None}
    try:
        marker = spec.out / f".cluster-{spec.token}"
        if not marker.is_file() or marker.read_text() != spec.token:
            raise RuntimeError(
                f"{spec.out} is not visible here at the same path (OUT must be on a shared "
                "filesystem)"
            )
        worker_grader(spec)
    except Exception as e:  # reported to the caller, which refuses to start
        info["error"] = f"{type(e).__name__}: {e}"
    return info


def grade_task(spec: Spec, job: Job, force: bool) -> dict:
    """One (student, assignment), graded in the worker process exactly as a local run grades it."""
    # nothing of an earlier attempt whose worker died is left to reap: its sandboxes end when
    # their pipe to the dead worker closes (wire.end_with_reader), its trusted pass with the
    # worker's fork server or by PR_SET_PDEATHSIG (test_cluster.py::
    # test_no_process_outlives_the_cluster_run)
    g = worker_grader(spec)
    (g.out / ".work").mkdir(parents=True, exist_ok=True)
    return g.grade_one(job, force=force)


# ----------------------------------------------------------------------------------------------
# clusters
def task_resources(limits: Limits) -> dict[str, float]:
    """What one grading asks of a worker: one core and the kernel's memory limit."""
    return {CORES: 1, MEMORY: float(limits.memory_bytes)}


def local_cluster(n: int, limits: Limits, allowed_failures: int = ALLOWED_FAILURES):
    """N single-threaded worker processes on loopback, each declaring the resources of one
    grading."""
    import dask
    from distributed import LocalCluster

    with dask.config.set({"distributed.scheduler.allowed-failures": allowed_failures}):
        return LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            resources=task_resources(limits),
        )


def slurm_cluster(limits: Limits, jobs: int = 10, **overrides):
    """dask-jobqueue's SLURMCluster: one single-threaded worker per core of each batch job.

    Queue, account, walltime, cores and memory per job come from ``~/.config/dask/jobqueue.yaml``
    (or ``overrides``); each worker declares its share of the job's cores and memory as resources.
    """
    import dask
    from dask.utils import parse_bytes
    from dask_jobqueue import SLURMCluster

    conf = dask.config.get("jobqueue.slurm", {})
    cores = int(overrides.pop("cores", None) or conf.get("cores") or 0)
    memory = overrides.pop("memory", None) or conf.get("memory")
    if not cores or not memory:
        raise RuntimeError(
            "slurm: set `cores` and `memory` per batch job in ~/.config/dask/jobqueue.yaml "
            "(jobqueue: slurm: {cores: 16, memory: 64GB, walltime: '02:00:00', queue: ...})"
        )
    per_worker = parse_bytes(memory) // cores if isinstance(memory, str) else int(memory) // cores
    if per_worker < limits.memory_bytes:
        raise RuntimeError(
            f"slurm: {memory} over {cores} cores leaves {per_worker / 2**30:.1f} GiB per grading; "
            f"the kernel limit is {limits.memory_bytes / 2**30:.1f} GiB (--memory-gb)"
        )
    extra = ["--resources", f"{CORES}=1,{MEMORY}={per_worker}"]
    cluster = SLURMCluster(
        cores=cores,
        processes=cores,
        memory=memory,
        worker_extra_args=list(overrides.pop("worker_extra_args", [])) + extra,
        **overrides,
    )
    # batch jobs come and go with the queue of tasks
    cluster.adapt(minimum_jobs=0, maximum_jobs=jobs)
    return cluster


def connect(cluster: str, limits: Limits):
    """(Client, things to close) for a cluster spec: local:N | tcp://HOST:PORT | slurm[:JOBS]."""
    from distributed import Client

    kind, _, arg = cluster.partition(":")
    if kind == "local":
        c = local_cluster(int(arg or os.cpu_count() or 1), limits)
        client = Client(c)
        return client, [client, c]
    if kind == "slurm":
        c = slurm_cluster(limits, jobs=int(arg or 10))
        client = Client(c)
        return client, [client, c]
    if kind in ("tcp", "tls"):
        client = Client(cluster)
        return client, [client]
    raise ValueError(f"--cluster {cluster!r}: expected local:N, tcp://HOST:PORT or slurm[:JOBS]")


def _workers(client) -> dict[str, dict]:
    """Every worker the scheduler knows (address -> info); newer clients list only 5 unless told
    otherwise."""
    try:
        return client.scheduler_info(n_workers=-1)["workers"]
    except TypeError:  # distributed before the n_workers argument
        return client.scheduler_info()["workers"]


def _check_resources(client, limits: Limits, wait_s: float) -> None:
    """Refuse (rather than wait forever) when no worker declares the resources a grading asks
    for."""
    need = task_resources(limits)
    deadline = time.monotonic() + wait_s
    while True:
        workers = _workers(client)
        if any(
            all(w.get("resources", {}).get(k, 0) >= v for k, v in need.items())
            for w in workers.values()
        ):
            return
        if time.monotonic() > deadline:
            have = sorted({str(w.get("resources", {})) for w in workers.values()}) or ["no workers"]
            raise RuntimeError(
                f"no worker can take a grading task (it needs {CORES}=1, "
                f"{MEMORY}={int(need[MEMORY])}); workers "
                f"have {', '.join(have)}. Start workers with one thread per core and these "
                "resources, e.g. `dask worker SCHEDULER --nworkers 16 --nthreads 1 --resources "
                f'"{CORES}=1,{MEMORY}={int(need[MEMORY])}"`'
            )
        time.sleep(1.0)


# ----------------------------------------------------------------------------------------------
# caller side
def _max_score(grader: Grader, assignment: str) -> float:
    t = grader.templates[assignment]
    return sum(
        float(nbg(c).get("points", 0))
        for text in t.notebooks.values()
        for c in nbformat.reads(text, as_version=4).cells
        if is_grade(c)
    )


def failed_record(grader: Grader, job: Job, reason: str) -> dict:
    """The record of a task the cluster could not complete: status error, score 0, and why."""
    # no fingerprint: the next run regrades it
    return (
        GradeRecord.start(
            job.student, job.assignment, _max_score(grader, job.assignment), cluster_failure=True
        )
        .add(Status.ERROR, reason)
        .finish()
        .to_json()
    )


def grade_on_cluster(
    course: Course,
    submissions: Path,
    out: Path,
    cluster,
    limits: Limits = Limits(),
    assignments: list[str] | None = None,
    students: list[str] | None = None,
    force: bool = False,
    log=print,
    merge: bool = True,
    retries: int = RETRIES,
    wait_s: float = 120.0,
) -> list[dict]:
    """Grade SUBMISSIONS into OUT on a Dask cluster (a spec string or a distributed Client); like
    grade().

    Returns the records sorted by (student, assignment); every job has one, failed tasks as
    ``error``.
    """
    jobs, assignments = find_jobs(course, Path(submissions), assignments, students)
    g = Grader(course, out, limits, log)
    with hold(g.out):  # one writer per OUT (a course folder holds every assignment: course.hold)
        return _grade_on_cluster(
            g, jobs, assignments, cluster, limits, force, log, merge, retries, wait_s
        )


def _preflight_all(client, spec: Spec, token: str) -> list[str]:
    """Run preflight on every worker: their addresses, or RuntimeError naming the bad ones."""
    addrs = list(_workers(client))
    checks = client.gather(
        [
            client.submit(
                preflight,
                spec,
                workers=[a],
                allow_other_workers=False,
                pure=False,
                key=f"preflight-{token}-{a}",
            )
            for a in addrs
        ]
    )
    bad = [f"{i['host']} (pid {i['pid']}): {i['error']}" for i in checks if i["error"]]
    if bad:
        raise RuntimeError("cannot grade on this cluster: " + "; ".join(bad))
    return addrs


def _task_record(g: Grader, f, job: Job) -> dict:
    """The record of one finished grading future: its result, or a failed record that says why."""
    from distributed import KilledWorker

    try:
        rec = f.result()
    except KilledWorker as e:
        rec = failed_record(
            g,
            job,
            "worker lost: every worker that graded this submission died under it "
            f"(the scheduler's allowed-failures was reached): {e}"[:500],
        )
    # after `retries` reruns: a harness failure, reported, never dropped
    except Exception as e:
        rec = failed_record(g, job, f"grading failed on the cluster: {type(e).__name__}: {e}"[:500])
    # so that export() and formgrader's merge see the row too
    if rec.get("cluster_failure"):
        write_atomic(g.out / "details" / job.student / f"{job.assignment}.json", dump_json(rec))
    return rec


def _grade_on_cluster(
    g: Grader,
    jobs: list[Job],
    assignments: list[str],
    cluster,
    limits: Limits,
    force: bool,
    log,
    merge: bool,
    retries: int,
    wait_s: float,
) -> list[dict]:
    from distributed import Client, as_completed

    course = g.course
    g.prepare(assignments)
    jobs = [Job(j.student, j.assignment, j.sub_dir.resolve()) for j in jobs]
    token = uuid.uuid4().hex
    spec = Spec(course, g.out, limits, tuple(assignments), g.fingerprint, token)
    marker = g.out / f".cluster-{token}"
    write_atomic(marker, token)
    if isinstance(cluster, Client):
        client, closers = cluster, []
    else:
        client, closers = connect(cluster, limits)
    records: dict[tuple[str, str], dict] = {}
    try:
        _check_resources(client, limits, wait_s)
        addrs = _preflight_all(client, spec, token)
        log(f"grading {len(jobs)} submission(s) on {len(addrs)} worker(s)")
        futures = {}
        for j in jobs:
            f = client.submit(
                grade_task,
                spec,
                j,
                force,
                key=f"grade-{token}-{j.student}/{j.assignment}",
                retries=retries,
                resources=task_resources(limits),
                pure=False,
            )
            futures[f.key] = (f, j)
        last_csv = 0.0
        for f in as_completed([f for f, _ in futures.values()]):
            job = futures[f.key][1]
            rec = _task_record(g, f, job)
            records[(job.student, job.assignment)] = rec
            log(
                f"{shown(job.student)}/{shown(job.assignment)}: {rec['status']} "
                f"{rec['score']:g}/{rec['max_score']:g}"
            )
            if time.monotonic() - last_csv > CSV_EVERY_S:
                write_csv(g.out / "grades.csv", records.values())
                last_csv = time.monotonic()
    finally:
        for c in closers:
            c.close()
        marker.unlink(missing_ok=True)
    write_csv(g.out / "grades.csv", records.values())
    shutil.rmtree(g.out / ".work", ignore_errors=True)
    result = [records[k] for k in sorted(records)]
    if merge:
        from autograde.gradebook import merge_gradebooks

        merge_gradebooks(g, result)
    return result
