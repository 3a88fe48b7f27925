"""Grading on a Dask cluster (`grade --cluster`), on loopback: same CSV as a local run, workers
killed.

Cost, measured on the 2-core machine: a graded fixture student costs ~5 s (kernel, verification
outside it, feedback), a hanging or crashing one ~10 s. 11 mixed submissions (correct, wrong,
hanging, crashing, attacking, broken) graded on 2 local worker threads and on 2 Dask worker
processes, one of them killed mid-task (22 submissions took 294 s, 14 took 160-170 s; cut to keep
the suite under 30 minutes on the project's CI; the reference on 2 threads since session 24, it was
one); a worker killed with no retries allowed ~16 s; refusals, the SLURM job script and the command
line ~20 s.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

from autograde import cluster  # noqa: E402
from autograde.grade import Limits, grade  # noqa: E402
from autograde.tests.attacks import WRONG_SQUARE, answer, attacks  # noqa: E402
from autograde.tests.conftest import (
    REAL_ASSIGNMENTS,
    RUN_MARK,
    grade_on_command_line,
    student_notebook,
    submit,
)  # noqa: E402

# a short cell limit keeps the hanging students cheap: the fixture's cells run in milliseconds (no
# torch)
LIMITS = Limits(wall_s=120, memory_bytes=2 << 30, cell_timeout=3)
DOUBLE, SQUARE, WHY = (
    "def double(x):\n    return {}\n",
    "def square(x):\n    return {}\n",
    "Because 2x = x + x.",
)


def _answers(double: str = "2 * x", square: str = "x * x", prefix: str = "") -> dict[str, str]:
    return {"double": prefix + DOUBLE.format(double), "square": SQUARE.format(square), "a_why": WHY}


# Attacks from the adversarial catalog, each before wrong answers (so an attacker's honest score is
# 0): the two that reach for the worker's processes (one leaves a process behind, one signals every
# process it sees), which is what a distributed run adds; test_adversarial grades the whole catalog
ATTACKS = ["background_process", "kill_grader"]


def _class(course, folder: Path) -> dict[str, tuple[float, str]]:
    """11 submissions: correct, wrong, hanging, crashing, attacking, broken (one or two of each
    kind: this test is about distribution, test_grade and test_adversarial about every status and
    attack).

    Returns student -> (score, status) for those whose outcome the course fixes. An attacker's
    status depends on how grading resists it (test_adversarial's subject), so only its score is
    fixed: 0.
    """
    known = {}
    for name, (d, s) in {"ok_mul": ("2 * x", "x * x")}.items():
        submit(folder, name, student_notebook(course, _answers(d, s)))
        known[name] = (3, "needs_manual_grade")
    # wrong: 2 * float(x) fails the hidden array case; x ** 3 fails square
    wrong = [("wrong_float", _answers("2 * float(x)"), 1)]
    for name, answers, score in wrong:
        submit(folder, name, student_notebook(course, answers))
        known[name] = (score, "needs_manual_grade")
    submit(folder, "untouched", student_notebook(course))
    known["untouched"] = (0, "graded")
    # hanging: stopped at the per-cell limit, the rest of the notebook graded
    loop = "def double(x):\n    while True:\n        pass\n"
    submit(folder, "hang_loop", student_notebook(course, {**_answers(), "double": loop}))
    known.update({"hang_loop": (1, "timeout")})
    # crashing: the kernel dies (os._exit, a segmentation fault, SIGKILL); the cell is skipped, the
    # rest graded (SIGABRT: a segmentation fault through ctypes, the older route, fails every check
    # as a module no answer may import)
    crashes = [("crash_segv", "import os\nos.abort()\n")]
    for name, prefix in crashes:
        submit(folder, name, student_notebook(course, _answers(prefix=prefix)))
        known[name] = (1, "kernel_died")
    catalog = attacks(course.root, folder / "ok_mul" / "fx" / "fx.ipynb", folder.parent / "out")
    for name in ATTACKS:
        submit(
            folder,
            f"attack_{name}",
            student_notebook(course, {"double": answer(catalog[name]), "square": WRONG_SQUARE}),
        )
    # broken: cut short, not a notebook at all, nothing submitted; a browser-renamed file is graded
    # as usual
    text = json.dumps(student_notebook(course, _answers()))
    submit(folder, "broken", text[: len(text) // 3])
    submit(folder, "not_json", bytes(range(256)) * 4)
    (folder / "absent" / "fx").mkdir(parents=True)
    renamed = submit(folder, "renamed", student_notebook(course, _answers()))
    renamed.rename(renamed.with_name("fx (1).ipynb"))
    known.update(
        {
            "broken": (0, "invalid_notebook"),
            "not_json": (0, "invalid_notebook"),
            "absent": (0, "missing"),
            "renamed": (3, "needs_manual_grade"),
        }
    )
    return known


def _rows(path: Path) -> list[dict]:
    with open(path) as f:
        return list(csv.DictReader(f))


def _executing(dask_worker) -> list[str]:
    return [str(ts.key) for ts in dask_worker.state.executing]


class Killer(threading.Thread):
    """Kills (SIGKILL) the worker process grading `student` once that task has run for `after`
    seconds."""

    def __init__(self, client, student: str, after: float = 1.5):
        super().__init__(daemon=True)
        self.client, self.student, self.after = client, student, after
        self.killed: list[tuple[str, int]] = []
        self.stop = threading.Event()

    def run(self) -> None:
        pids = self.client.run(os.getpid)
        seen = None
        while not self.stop.is_set() and not self.killed:
            try:
                running = self.client.run(_executing)
            except Exception:
                running = {}
            addr = next(
                (
                    a
                    for a, keys in running.items()
                    if any(k.endswith(f"-{self.student}/fx") for k in keys)
                ),
                None,
            )
            if addr and seen is None:
                seen = time.monotonic()
            if addr and time.monotonic() - seen >= self.after:
                os.kill(pids[addr], signal.SIGKILL)
                self.killed.append((addr, pids[addr]))
            time.sleep(0.2)


@pytest.fixture(scope="module")
def graded(fx_course, tmp_path_factory):
    """The class graded locally on 2 worker threads (the reference; test_grade.py holds that one
    worker gives the same rows) and on a 2-process LocalCluster with one worker
    killed."""
    from distributed import Client

    folder = tmp_path_factory.mktemp("class")
    known = _class(fx_course, folder)
    t0 = time.monotonic()
    seq = tmp_path_factory.mktemp("seq")
    grade(fx_course, folder, seq, workers=2, limits=LIMITS, log=lambda *_: None)
    t_seq = time.monotonic() - t0
    out = tmp_path_factory.mktemp("cluster")
    lc = cluster.local_cluster(2, LIMITS)
    try:
        with Client(lc) as client:
            killer = Killer(client, "hang_loop")
            killer.start()
            t0 = time.monotonic()
            records = cluster.grade_on_cluster(
                fx_course, folder, out, client, limits=LIMITS, log=lambda *_: None
            )
            t_cluster = time.monotonic() - t0
            killer.stop.set()
            killer.join()
            allowed = client.run_on_scheduler(
                lambda dask_scheduler: dask_scheduler.allowed_failures
            )
    finally:
        lc.close()
    print(
        f"\nlocal pool of 2 {t_seq:.1f} s, cluster of 2 {t_cluster:.1f} s "
        f"for {len(records)} submissions"
    )
    return {
        "folder": folder,
        "known": known,
        "seq": seq,
        "out": out,
        "records": records,
        "killed": killer.killed,
        "allowed": allowed,
    }


def test_cluster_csv_is_byte_identical_to_the_local_run(graded):
    seq, out = graded["seq"], graded["out"]

    # byte-identical but for an attacker's status and detail, which depend on timing inside its own
    # sandbox (a fork bomb can starve the runner of processes before or after its report): its score
    # is fixed, 0
    def comparable(path: Path) -> list[str]:
        return [
            line if not line.startswith("attack_") else ",".join(line.split(",")[:4])
            for line in path.read_text().splitlines()
        ]

    assert comparable(out / "grades.csv") == comparable(seq / "grades.csv")
    rows = {r["student"]: r for r in _rows(out / "grades.csv")}
    assert len(rows) == 11
    assert {s: (float(rows[s]["score"]), rows[s]["status"]) for s in graded["known"]} == {
        s: (float(sc), st) for s, (sc, st) in graded["known"].items()
    }
    assert {s: float(rows[f"attack_{s}"]["score"]) for s in ATTACKS} == {s: 0.0 for s in ATTACKS}
    # the gradebook for formgrader was merged from the cluster's results too
    assert (
        (out / "gradebook.db").exists()
        and not list(out.glob(".cluster-*"))
        and not (out / ".work").exists()
    )


def test_a_worker_killed_mid_task_loses_nothing(graded):
    """The worker grading hang_loop was SIGKILLed mid-task; the task ran again and its row is the
    same."""
    assert graded["allowed"] == cluster.ALLOWED_FAILURES
    assert len(graded["killed"]) == 1, "the killer never saw hang_loop's task running"
    seq = {r["student"]: r for r in _rows(graded["seq"] / "grades.csv")}
    got = {r["student"]: r for r in _rows(graded["out"] / "grades.csv")}
    assert got["hang_loop"] == seq["hang_loop"] and got["hang_loop"]["status"] == "timeout"
    for student in seq:
        assert (graded["out"] / "details" / student / "fx.json").exists()


def test_no_process_outlives_the_cluster_run(graded):
    import psutil

    left = [
        p for p in psutil.process_iter(["cmdline"]) if RUN_MARK in " ".join(p.info["cmdline"] or [])
    ]
    assert left == []
    # nor any process of the grading itself: a sandbox, a kernel, a fork server or its worker
    # (each names OUT's scratch folder in its command line or working folder)
    out = str(graded["out"])
    mine = []
    for p in psutil.process_iter(["cmdline", "cwd"]):
        try:
            if out in " ".join(p.info["cmdline"] or []) or out in (p.info["cwd"] or ""):
                mine.append(p.info)
        except psutil.Error:
            pass
    assert mine == []


def test_a_task_whose_workers_keep_dying_is_reported_not_dropped(fx_course, tmp_path):
    """With no retries allowed, killing the worker of a task makes an `error` row saying the worker
    was lost."""
    from distributed import Client

    folder = tmp_path / "subs"
    submit(
        folder,
        "a_hang",
        student_notebook(
            fx_course,
            {**_answers(), "square": "import time\ndef square(x):\n    time.sleep(600)\n"},
        ),
    )
    submit(folder, "b_ok", student_notebook(fx_course, _answers()))
    lc = cluster.local_cluster(2, LIMITS, allowed_failures=0)
    try:
        with Client(lc) as client:
            killer = Killer(client, "a_hang")
            killer.start()
            records = cluster.grade_on_cluster(
                fx_course,
                folder,
                tmp_path / "out",
                client,
                limits=LIMITS,
                log=lambda *_: None,
                merge=False,
            )
            killer.stop.set()
            killer.join()
    finally:
        lc.close()
    assert len(killer.killed) == 1
    rows = {r["student"]: r for r in _rows(tmp_path / "out" / "grades.csv")}
    assert set(rows) == {"a_hang", "b_ok"} and [r["student"] for r in records] == ["a_hang", "b_ok"]
    assert (rows["a_hang"]["status"], rows["a_hang"]["score"], rows["a_hang"]["max_score"]) == (
        "error",
        "0",
        "4",
    )
    assert rows["a_hang"]["detail"].startswith("worker lost")
    assert (rows["b_ok"]["status"], rows["b_ok"]["score"]) == ("needs_manual_grade", "3")
    detail = json.loads((tmp_path / "out" / "details" / "a_hang" / "fx.json").read_text())
    assert detail["status"] == "error" and "fingerprint" not in detail  # the next run regrades it


def _thread_cluster(resources: dict | None):
    """A one-worker cluster in this process (so monkeypatches reach the worker); ~1 s."""
    from distributed import LocalCluster

    return LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,
        dashboard_address=None,
        resources=resources,
    )


def test_refuses_when_the_sandbox_is_required_but_unavailable(fx_course, tmp_path, monkeypatch):
    from distributed import Client

    from autograde import sandbox

    monkeypatch.setattr(
        sandbox,
        "unavailable",
        lambda: "the grader is not root, so it cannot run student code as another user",
    )
    monkeypatch.setattr(cluster, "_GRADERS", {})
    submit(tmp_path / "subs", "s", student_notebook(fx_course, _answers()))
    with _thread_cluster(cluster.task_resources(LIMITS)) as lc, Client(lc) as client:
        with pytest.raises(RuntimeError, match="cannot grade safely: the grader is not root"):
            cluster.grade_on_cluster(
                fx_course,
                tmp_path / "subs",
                tmp_path / "out",
                client,
                limits=LIMITS,
                log=lambda *_: None,
            )
    assert not (tmp_path / "out" / "grades.csv").exists()


def test_refuses_workers_without_the_resources_a_task_needs(fx_course, tmp_path):
    from distributed import Client

    submit(tmp_path / "subs", "s", student_notebook(fx_course, _answers()))
    small = {cluster.CORES: 1, cluster.MEMORY: LIMITS.memory_bytes // 2}
    with _thread_cluster(small) as lc, Client(lc) as client:
        with pytest.raises(
            RuntimeError, match=r"no worker can take a grading task .*--nthreads 1 --resources"
        ):
            cluster.grade_on_cluster(
                fx_course,
                tmp_path / "subs",
                tmp_path / "out",
                client,
                limits=LIMITS,
                log=lambda *_: None,
                wait_s=0,
            )


def test_slurm_workers_declare_one_core_and_their_memory_share():
    pytest.importorskip("dask_jobqueue")
    sc = cluster.slurm_cluster(
        Limits(memory_bytes=4 << 30),
        jobs=3,
        cores=8,
        memory="64GiB",
        queue="grading",
        walltime="01:00:00",
        scheduler_options={"host": "127.0.0.1", "dashboard_address": None},
    )
    try:
        script = sc.job_script()
    finally:
        sc.close()
    assert "#SBATCH -p grading" in script and "#SBATCH -t 01:00:00" in script
    assert "--nthreads 1" in script and "--nworkers 8" in script
    assert f"--resources {cluster.CORES}=1,{cluster.MEMORY}={8 << 30}" in script  # 64 GiB / 8
    with pytest.raises(RuntimeError, match="leaves 2.0 GiB per grading"):
        cluster.slurm_cluster(Limits(memory_bytes=4 << 30), cores=8, memory="16GiB")


def test_unknown_cluster_spec():
    with pytest.raises(ValueError, match="expected local:N"):
        cluster.connect("yarn:3", LIMITS)


@pytest.mark.skipif(not REAL_ASSIGNMENTS, reason="no solutions/ in this checkout")
def test_command_line_with_a_local_cluster(tmp_path):
    """`python -m autograde grade --cluster local:2` end to end, on submissions that need no
    kernel."""
    res, rows = grade_on_command_line(tmp_path, "--cluster", "local:2")
    assert rows["nobody"]["status"] == "missing" and rows["broken"]["status"] == "invalid_notebook"
    assert float(rows["broken"]["max_score"]) > 0 and "on 2 worker(s)" in res.stdout
