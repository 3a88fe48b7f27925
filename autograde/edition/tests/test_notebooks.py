"""Every notebook, untouched, runs top to bottom: the exercises stop at NotImplementedError and
nothing else fails.

Each notebook runs in a fresh kernel of this Python (its cells run even after an error, as a student
clicking "Run all" would see them). Errors are allowed only where an exercise is still a stub: a
cell that raises NotImplementedError, or a check cell whose message says the stub raised it; "check
my work" must list every exercise as not attempted. 5-30 s per notebook.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*/*.ipynb"))


def run(path: Path, timeout: int = 600):
    """The executed notebook (errors kept in the outputs), in a kernel of the Python running the
    tests."""
    from jupyter_client.kernelspec import NATIVE_KERNEL_NAME, KernelSpecManager

    nb = nbformat.read(path, as_version=4)
    ksm = KernelSpecManager()
    ksm.ensure_native_kernel = True
    spec = ksm.get_kernel_spec(NATIVE_KERNEL_NAME)
    assert Path(spec.argv[0]).name.startswith("python"), spec.argv
    client = nbclient.NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=NATIVE_KERNEL_NAME,
        allow_errors=True,
        resources={"metadata": {"path": str(path.parent)}},
    )
    # a student's run: every cell runs
    env = {k: v for k, v in os.environ.items() if k != "COURSE_GRADING"}
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    client.km = client.create_kernel_manager()
    client.start_new_kernel(env=env)
    try:
        client.start_new_kernel_client()
        for index, cell in enumerate(nb.cells):
            client.execute_cell(cell, index)
    finally:
        client._cleanup_kernel()
    return nb


def errors(nb) -> list[tuple[int, str, str, str]]:
    """(cell index, cell id, exception name, message) of every error output."""
    return [
        (i, c.get("id", ""), o.ename, o.evalue)
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "error"
    ]


def is_stub_error(nb, index: int, ename: str, evalue: str) -> bool:
    """An error an untouched exercise causes: NotImplementedError itself, or a check reporting
    it."""
    if ename == "NotImplementedError":
        return True
    return "NotImplementedError" in evalue or "NotImplementedError" in "".join(
        "".join(o.get("traceback", [])) for o in nb.cells[index].outputs if o.output_type == "error"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_untouched_notebook_runs_top_to_bottom(path):
    nb = run(path)
    errs = errors(nb)
    other = [e for e in errs if not is_stub_error(nb, e[0], e[2], e[3])]
    assert not other, f"{path.name}: errors other than an exercise's NotImplementedError: {other}"
    # each exercise's check cell says it is not attempted yet and lets the run go on (it raises only
    # when graded)
    told = "".join(
        o.get("text", "")
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "stream"
    )
    assert "not attempted yet" in told, "no check reported an untouched exercise"
    stdout = "".join(
        o.get("text", "")
        for c in nb.cells
        if c.cell_type == "code" and "check_all(" in c.source
        for o in c.outputs
        if o.output_type == "stream"
    )
    # "check my work": nothing passed or failed, every exercise "not attempted"
    assert re.search(r"^0 passed, 0 failed, [1-9][0-9]* not attempted \(of ", stdout, re.M), stdout[
        -2000:
    ]
