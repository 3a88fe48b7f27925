"""The trusted pass forked from a server that imported nbgrader once (autograde.forkserver).

- the same grades.csv, details and feedback pages as a plain process per job:
  test_grade.py::test_one_worker_gives_the_same_results_and_reruns_reuse_them;
- a wall-clock stop kills the forked worker; the server ends with the grader's pipe (a grader or a
  Dask worker that died) and takes its children with it (a worker blocked on a FIFO: ~3 s); the
  cluster's rows, byte for byte a local run's: test_cluster.py.
"""

from __future__ import annotations

import os
import time

import psutil
import pytest

from autograde import grade as grade_module
from autograde.forkserver import ForkServer


@pytest.fixture
def blocked_job(tmp_path):
    """A job folder whose job.json is a FIFO nobody writes: its worker blocks reading it."""
    jobdir = tmp_path / "job"
    jobdir.mkdir()
    os.mkfifo(jobdir / "job.json")
    return jobdir


def _server_env() -> dict:
    return {**os.environ, "PYTHONHASHSEED": "0"}


def _wait_gone(pid: int, seconds: float = 10) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
            return True
        time.sleep(0.05)
    return False


def test_a_wall_clock_stop_kills_the_forked_worker(blocked_job):
    server = ForkServer(_server_env())
    try:
        started = time.monotonic()
        rc, cpu = server.run(
            blocked_job, _server_env(), time.monotonic() + 1, grade_module._kill_tree
        )
        # stopped by the deadline (None), not ended by itself; well before the 10 s a hang would
        # take to notice here
        assert rc is None and cpu >= 0 and time.monotonic() - started < 10
        # the server still serves the next job
        assert server.serves(_server_env())
    finally:
        server.close()


def test_the_server_ends_with_the_grader_pipe_and_takes_its_children(blocked_job):
    server = ForkServer(_server_env())
    got = []
    import threading

    t = threading.Thread(
        target=lambda: got.append(
            server.run(blocked_job, _server_env(), time.monotonic() + 600, grade_module._kill_tree)
        ),
        daemon=True,
    )
    t.start()
    end = time.monotonic() + 30
    children = []
    while time.monotonic() < end and not children:
        children = psutil.Process(server._proc.pid).children()
        time.sleep(0.05)
    assert len(children) == 1
    child = children[0].pid
    server._proc.stdin.close()  # what the grader's death does to the pipe
    assert _wait_gone(child) and _wait_gone(server._proc.pid)
    t.join(10)
    assert got == [None]  # no result: the caller would run the job as a plain process
    server._proc.wait()
