"""Run a student's notebook top to bottom INSIDE a sandbox: ``python -m autograde.inside.runner``
(untrusted side).

Reads the job from standard input (JSON: the notebook to run, its cell timeout, how often to retry
after the kernel dies) and writes one framed message to standard output
(autograde.inside.wire.frame): what each code cell printed, as plain text, and which cells killed
the kernel or ignored the interrupt at their time limit.

Everything here runs as the sandbox user, beside the student's kernel: the grader believes none of
it. What it reports can only lower the student's own score (a cell that failed here fails), never
raise it, so a student who forges this output harms only their own grade. The kernel is a child
process with its standard output and error sent to /dev/null; it talks to this process over Unix
sockets in the private /tmp.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from typing import Any

DEMO_TAG = "demo"  # as autograde.inside.cells.DEMO_TAG
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
KERNEL_DIED = "KernelDied"
KERNEL = "autograde-python"


# the sandbox's private /tmp (a scratch folder with --no-sandbox)
TMP = os.environ.get("TMPDIR", "/tmp")


def _kernelspec() -> None:
    folder = f"{TMP}/jupyter/kernels/{KERNEL}"
    os.makedirs(folder, exist_ok=True)
    with open(f"{folder}/kernel.json", "w") as f:
        json.dump(
            {
                "argv": [
                    sys.executable,
                    "-m",
                    "autograde.inside.kernel",
                    "-f",
                    "{connection_file}",
                ],
                "display_name": "Python 3 (grading)",
                "language": "python",
            },
            f,
        )
    for key, sub in (
        ("JUPYTER_PATH", ""),
        ("JUPYTER_RUNTIME_DIR", "/runtime"),
        ("JUPYTER_DATA_DIR", "/data"),
        ("JUPYTER_CONFIG_DIR", "/config"),
    ):
        os.environ[key] = f"{TMP}/jupyter{sub}"


TEXT_CAP = 200_000  # characters kept of one cell's output (as autograde.boundary.TEXT_CAP)
ITEMS_CAP = 100  # outputs kept per cell


def _cap(items: list[dict]) -> list[dict]:
    """A cell's outputs cut to TEXT_CAP characters and ITEMS_CAP items in all (a print of a huge
    tensor)."""
    kept, budget = [], TEXT_CAP
    for item in items[:ITEMS_CAP]:
        key = "text" if item["kind"] == "stream" else "traceback"
        if len(item[key]) > budget:
            item = {
                **item,
                key: item[key][: max(budget, 0)]
                + f"\n... output cut: {len(item[key]) - max(budget, 0)} "
                "more characters ...\n",
            }
        budget -= len(item[key])
        kept.append(item)
        if budget <= 0:
            break
    return kept


def _text(out: dict) -> list[dict]:
    """A cell output as inert text items: stream text, an error, or the text/plain of a result."""
    kind = out.get("output_type")
    if kind == "stream":
        text = out.get("text", "")
        return [
            {
                "kind": "stream",
                "name": "stderr" if out.get("name") == "stderr" else "stdout",
                "text": text if isinstance(text, str) else "".join(text),
            }
        ]
    if kind == "error":
        return [
            {
                "kind": "error",
                "ename": str(out.get("ename", "")),
                "evalue": str(out.get("evalue", "")),
                "traceback": ANSI.sub("", "\n".join(map(str, out.get("traceback", [])))),
            }
        ]
    if kind in ("execute_result", "display_data"):
        plain = out.get("data", {}).get("text/plain")
        if plain is not None:
            return [
                {
                    "kind": "stream",
                    "name": "stdout",
                    "text": (plain if isinstance(plain, str) else "".join(plain)) + "\n",
                }
            ]
    return []


def _cpu_seconds(pid: int) -> float:
    """CPU time (user + system) a process has used so far, from /proc."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


class CpuWatch:
    """Interrupts the kernel once the running cell has used ``limit`` seconds of CPU.

    The per-cell limit counts the CPU time the cell used, not the wall-clock time it waited: on a
    loaded machine a cell that fills memory reaches the memory limit (what really happened) instead
    of a clock that ran while it waited for a core. A wall-clock backstop (WALL_FACTOR x the limit)
    still stops a cell that sleeps. Also tells whether the kernel kept burning CPU after the
    interrupt (the cell ignored it).
    """

    def __init__(self, pid: int, limit: float):
        import threading

        self.pid, self.limit = pid, limit
        self.start = _cpu_seconds(pid)
        self.fired = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        import signal

        while not self._stop.wait(0.1):
            if _cpu_seconds(self.pid) - self.start > self.limit and not self.fired:
                self.fired = True
                try:
                    os.kill(self.pid, signal.SIGINT)
                except OSError:
                    return

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def still_busy(self) -> bool:
        """Whether the kernel is still using CPU a few seconds after the interrupt (it ignored
        it)."""
        before = _cpu_seconds(self.pid)
        time.sleep(3)
        return _cpu_seconds(self.pid) - before > 1.0


WALL_FACTOR = 5


def _client(nb: Any, cell_timeout: int) -> Any:
    """An nbclient client for the notebook: its kernel on Unix sockets in the private /tmp, errors
    in one line, every error reply kept as an output."""
    import nbformat
    from nbclient import NotebookClient

    # xmode Minimal: an error's report costs no more than its line (white-box red team 23, D13: a
    # traceback of 10**6 frames took minutes to format after the cell's CPU limit had interrupted
    # it)
    client = NotebookClient(
        nb,
        timeout=cell_timeout * WALL_FACTOR,
        kernel_name=KERNEL,
        allow_errors=True,
        extra_arguments=["--InteractiveShell.xmode=Minimal"],
        interrupt_on_timeout=True,
        record_timing=False,
        shutdown_kernel="immediate",
        raise_on_iopub_timeout=False,
        iopub_timeout=10,
        error_on_timeout={
            "ename": "CellTimeoutError",
            "evalue": "",
            "traceback": [
                f"CellTimeoutError: no reply from the kernel within "
                f"{cell_timeout * WALL_FACTOR} s of waiting"
            ],
        },
        resources={"metadata": {"path": os.environ.get("HOME", TMP)}},
    )
    client.km = client.create_kernel_manager()
    if os.environ.get("AUTOGRADE_TRANSPORT") != "tcp":
        client.km.transport = "ipc"
        client.km.ip = f"{TMP}/kernel"  # a sandbox has no network: Unix sockets in its private /tmp

    def on_executed(cell, execute_reply, **_):
        content = execute_reply.get("content", {})
        # a timeout's reply (CellTimeoutError) differs from the KeyboardInterrupt the cell printed:
        # keep both
        if content.get("status") == "error" and not any(
            o.get("output_type") == "error" and o.get("ename") == content.get("ename")
            for o in cell.outputs
        ):
            cell.outputs.append(
                nbformat.from_dict(
                    {
                        "output_type": "error",
                        "ename": content.get("ename", ""),
                        "evalue": content.get("evalue", ""),
                        "traceback": content.get("traceback", []),
                    }
                )
            )

    client.on_cell_executed = on_executed
    return client


def _run_once(nb: str, cell_timeout: int, skip: dict[int, str]):
    """Execute the notebook once; (outputs by cell index, index of the cell that ended the run,
    why)."""
    import nbformat
    from nbclient.exceptions import DeadKernelError

    nb = nbformat.reads(nb, as_version=4)
    client = _client(nb, cell_timeout)
    outputs: dict[int, list[dict]] = {}
    ended, why = None, ""
    with open(os.devnull, "w") as null:
        with client.setup_kernel(stdout=null, stderr=null):
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code":
                    continue
                if DEMO_TAG in cell.get("metadata", {}).get("tags", []):
                    outputs[index] = [
                        {
                            "kind": "stream",
                            "name": "stdout",
                            "text": "[demo cell: not run while grading]\n",
                        }
                    ]
                    continue
                if index in skip:
                    outputs[index] = [
                        {
                            "kind": "error",
                            "ename": KERNEL_DIED,
                            "evalue": skip[index],
                            "traceback": f"{KERNEL_DIED}: {skip[index]}",
                        }
                    ]
                    continue
                watch = CpuWatch(client.km.provisioner.pid, cell_timeout)
                try:
                    client.execute_cell(cell, index)
                except DeadKernelError:
                    ended, why = index, "died"
                except Exception as e:  # noqa: BLE001 - whatever stopped the client ends this run
                    ended, why = index, f"stuck: {type(e).__name__}: {e}"
                finally:
                    watch.stop()
                outputs[index] = _cap(
                    [item for out in cell.get("outputs", []) for item in _text(out)]
                )
                timed_out = watch.fired or any(
                    o["kind"] == "error" and o["ename"] == "CellTimeoutError"
                    for o in outputs[index]
                )
                if watch.fired:
                    outputs[index].append(
                        {
                            "kind": "error",
                            "ename": "CellTimeoutError",
                            "evalue": f"used more than {cell_timeout} s of CPU time",
                            "traceback": "CellTimeoutError: this cell used more than "
                            f"{cell_timeout} s "
                            "of CPU time (the per-cell limit) and was interrupted",
                        }
                    )
                if ended is None and timed_out and watch.still_busy():
                    ended, why = index, "stuck: the kernel kept running after the interrupt"
                if ended is not None:
                    break
    return outputs, ended, why


def not_dumpable() -> None:
    """The kernel runs as this process's uid: without this it could ptrace the runner, write its
    memory through /proc, or take its report pipe with pidfd_getfd (an attack did all three:
    test_runner_shield.py::test_a_process_of_the_same_uid_cannot_open_the_runners_memory). A process
    that is not dumpable refuses all of them to a process of the same uid without CAP_SYS_PTRACE;
    the flag is reset for the kernel by its exec, so only the runner is shielded."""
    import ctypes

    try:
        # PR_SET_DUMPABLE = 4, SUID_DUMP_DISABLE = 0
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: nothing to do


def main() -> int:
    """Read the job, run the notebook (again without a cell that killed the kernel), print the
    framed result."""
    not_dumpable()
    job = json.loads(sys.stdin.buffer.read())
    # the framed result goes here; the student's code sees a /dev/null standard output
    out_fd = os.dup(1)
    from autograde.inside import wire

    wire.end_with_reader(out_fd)  # the grader gone: this sandbox goes too
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    _kernelspec()
    t0 = time.perf_counter()
    skip: dict[int, str] = {}
    died, stuck = [], []
    outputs: dict[int, list[dict]] = {}
    for _attempt in range(int(job.get("retries", 2)) + 1):
        outputs, ended, why = _run_once(job["notebook"], int(job["cell_timeout"]), skip)
        if ended is None:
            break
        if why == "died":
            died.append(ended)
            skip[ended] = (
                "the kernel died while running this cell (os._exit, a crash, or a signal); "
                "the cell was skipped and the rest of the notebook graded without it"
            )
        else:
            stuck.append(ended)
            skip[ended] = (
                "this cell did not stop when interrupted at its time limit; "
                "the cell was skipped and the rest of the notebook graded without it"
            )
    result = {
        "cells": [{"index": i, "outputs": o} for i, o in sorted(outputs.items())],
        "died": died,
        "stuck": stuck,
        "seconds": round(time.perf_counter() - t0, 2),
    }
    payload = json.dumps(result).encode()
    os.write(out_fd, b"%d\n" % len(payload))
    view = memoryview(payload)
    while view:
        view = view[os.write(out_fd, view) :]
    # a thread the student left running must not keep this process (and the grader) waiting
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
