"""Every demonstration's headline assertion runs: the solution notebooks top to bottom, demo cells included.

Grading (and so `selfcheck`) skips cells tagged `demo`, so an `assert` in a demonstration proves nothing unless
something runs it. Here a fresh Jupyter kernel runs each solution notebook as "Run All" does, with this checkout's
`course_lib`, and the test fails on the first error, naming the cell: a change that silently breaks a lesson
(greedy no longer repeating more than top-p, an unmasked block no longer copying, a quoted erratum no longer
failing the way the text says) fails here. 01 is not repeated here: tests/test_browser.py runs its solution
top to bottom in JupyterLab and asserts that no cell errs. 04 runs here for its non-timing demonstrations
(the cache gives the same tokens and logits as recomputing, padded rows stop at their own stop sequence, the KV
cache's bytes for published shapes, 538 MB per token in float32); its timings assert nothing (speed claims
live in benchmarks/, never in timed tests).
Cost on 2 cores: about the notebooks' own run time (benchmarks/pace.py prints it per notebook), ~3-4 min
(04: 64 s measured with other work running).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = ["02_logits_softmax", "03_sampling", "04_generation_loop", "05_debugging_generation"]

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_solution_runs_top_to_bottom_with_every_demo_assertion(assignment, monkeypatch):
    path = ROOT / "solutions" / assignment / f"{assignment}.ipynb"
    nb = nbformat.read(path, as_version=4)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    monkeypatch.delenv("COURSE_GRADING", raising=False)       # a student's run: demo cells are not skipped
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as e:
        pytest.fail(f"{assignment}: a cell failed:\n{str(e)[-3000:]}")
    asserts = sum("assert " in c.source for c in nb.cells
                  if c.cell_type == "code" and "demo" in c.metadata.get("tags", []))
    assert asserts >= 1, f"{assignment}: no demonstration asserts its headline"
