"""The trusted pass's processes, forked from one that has imported nbgrader already.

Each graded student's trusted pass (autograde.worker: nbgrader without a kernel, then feedback) ran
in a fresh ``python -m autograde.worker``, and 1.3 of its ~2.6 CPU seconds went to importing
nbgrader, nbconvert and nbformat. Here one server process per grading run imports them once and
forks a child for each job; the child is the worker process as before: its own session, its job
folder as working directory, the job's environment, ``worker.log`` as stdout and stderr, its memory
limit, and the same ``main``. No student code runs in the server or its children (the worker's
inputs are the validated job.json), so forking saves time and changes no trust.

The protocol is lines of JSON on the server's stdin and stdout: ``{"id", "jobdir", "env"}`` in,
``{"id", "pid"}`` when the child started and ``{"id", "status", "cpu"}`` when it ended (its exit
status as ``os.waitstatus_to_exitcode`` gives it, CPU seconds of it and its children). The server
ends, killing the children it started, when the grader's end of its stdin closes (the grader ended
or died). A grader whose server cannot start, or died, uses a plain process per job
(``autograde.grade._run_worker``), which gives the same result
(autograde/tests/test_forkserver.py).
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

# environment variables fixed when an interpreter starts: a job whose values differ from the
# server's runs in a plain process instead
AT_START = ("PYTHONPATH", "PYTHONHASHSEED", "PATH")


class ForkServer:
    """The grader's side: starts the server, hands it jobs, waits for them (thread-safe)."""

    def __init__(self, env: dict):
        self.env = {k: env.get(k) for k in AT_START}
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "autograde.forkserver"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._replies: dict[int, dict] = {}
        self._next = 0
        self._alive = True
        threading.Thread(target=self._read, daemon=True).start()

    def serves(self, env: dict) -> bool:
        """Whether a job with this environment can run here (alive, same interpreter settings)."""
        return self._alive and all(env.get(k) == v for k, v in self.env.items())

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            msg = json.loads(line)
            with self._changed:
                self._replies.setdefault(msg["id"], {}).update(msg)
                self._changed.notify_all()
        with self._changed:
            self._alive = False
            self._changed.notify_all()

    def run(
        self, jobdir: Path, env: dict, deadline: float, kill_tree
    ) -> tuple[int | None, float] | None:
        """Run one job's worker; (exit code or None if the wall-clock limit struck, CPU seconds),
        or None when the server could not run it (the caller then starts a plain process)."""
        with self._changed:
            if not self._alive:
                return None
            job = self._next
            self._next += 1
            self._replies[job] = {}
            try:
                assert self._proc.stdin is not None
                self._proc.stdin.write(
                    (json.dumps({"id": job, "jobdir": str(jobdir), "env": env}) + "\n").encode()
                )
                self._proc.stdin.flush()
            except OSError:
                self._alive = False
                return None
            while "pid" not in self._replies[job] and self._alive:
                self._changed.wait(0.5)
            if "pid" not in self._replies[job]:
                return None
            pid, timed_out = self._replies[job]["pid"], False
            while "status" not in self._replies[job] and self._alive:
                if time.monotonic() > deadline and not timed_out:
                    kill_tree(pid)
                    timed_out = True
                self._changed.wait(0.05)
            reply = self._replies.pop(job)
        if "status" not in reply:  # the server died under the job: the caller runs it again
            return None
        return (None if timed_out else reply["status"]), reply["cpu"]

    def close(self) -> None:
        """End the server (it kills any child still running) and wait for it."""
        try:
            assert self._proc.stdin is not None
            self._proc.stdin.close()
        except OSError:
            pass
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


# ------------------------------------------------------------------------------------------------
# the server
def _child(req: dict) -> None:
    """In the forked child: become the worker process of one job; never returns."""
    rc = 1
    try:
        os.setsid()  # its own session, so that a wall-clock stop kills its whole tree
        jobdir = Path(req["jobdir"])
        log = os.open(jobdir / "worker.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.closerange(3, 1 << 16)
        os.chdir(jobdir)
        os.environ.clear()
        os.environ.update(req["env"])
        import tempfile

        tempfile.tempdir = None  # read again from this job's environment
        from autograde import worker

        worker.T_START = time.perf_counter()
        rc = worker.run(str(jobdir))
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(rc)


def serve() -> None:
    """Import what every worker imports, then fork a worker per job line until stdin closes."""
    import nbformat  # noqa: F401
    from nbgrader.apps import NbGraderAPI  # noqa: F401

    from autograde import worker  # noqa: F401
    from autograde.inside.sanitize import feedback_safe  # noqa: F401

    inp, out = sys.stdin.fileno(), sys.stdout.fileno()
    children: dict[int, int] = {}  # pid -> job id
    buf = b""
    closed = False

    def say(msg: dict) -> None:
        os.write(out, (json.dumps(msg) + "\n").encode())

    while not closed or children:
        if not closed and select.select([inp], [], [], 0.05)[0]:
            data = os.read(inp, 1 << 16)
            closed = not data
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                req = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    _child(req)
                children[pid] = req["id"]
                say({"id": req["id"], "pid": pid})
            if closed:  # the grader is gone: nobody will read these jobs' results
                for pid in children:
                    try:
                        os.killpg(pid, signal.SIGKILL)
                    except OSError:
                        pass
        elif closed:
            time.sleep(0.05)
        while children:
            pid, status, ru = os.wait4(-1, os.WNOHANG)
            if not pid:
                break
            job = children.pop(pid)
            cpu = ru.ru_utime + ru.ru_stime
            if not closed:
                say({"id": job, "status": os.waitstatus_to_exitcode(status), "cpu": cpu})


if __name__ == "__main__":
    serve()
