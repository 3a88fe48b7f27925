"""nbgrader preprocessors used while grading (imported by the worker process, never by the kernel).

- ``GradingExecute``: nbgrader's Execute, plus: cells tagged ``demo`` are not run (docs/design.md "Grading
  cost"); cells listed in ``skip_cells`` (they killed the kernel on an earlier attempt) are not run and get
  an error output instead; the index of the running cell is written to ``state_file`` so the harness knows
  which cell was running when the kernel died, the cell got stuck (it ignored the interrupt sent at its time
  limit), or the wall-clock limit struck.
- ``StderrNotFailure``: nbgrader scores 0 for any grade cell that wrote to stderr (``utils.determine_grade``
  treats a stderr stream like an error). A warning logged by correct code is not a failure, so stderr
  streams in grade cells become stdout streams headed "[stderr]" (text kept for the feedback): a test cell
  now fails only by raising, which is how every check reports failure.
"""

from __future__ import annotations

import json
import os

from nbclient.exceptions import DeadKernelError
from nbformat.v4 import new_output
from traitlets import Dict, Integer, Unicode

from autograde.course import DEMO_TAG
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from nbgrader.utils import is_grade

KILLED_KERNEL = "KernelDied"


def _write_state(path: str, state: dict) -> None:
    if path:
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(state, f)
        os.replace(tmp, path)


class GradingExecute(Execute):
    """Execute that skips demo cells and cells that killed the kernel before, and records progress."""

    skip_cells = Dict({}, help="'<notebook>/<cell index>' -> reason: cells not to run").tag(config=True)
    state_file = Unicode("", help="JSON file updated with the index of the cell being run").tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        if DEMO_TAG in cell.metadata.get("tags", []):
            cell.outputs = [new_output("stream", name="stdout", text="[demo cell: not run while grading]\n")]
            return cell, resources
        notebook = resources.get("nbgrader", {}).get("notebook", "")
        key = f"{notebook}/{index}"
        if key in self.skip_cells:
            reason = self.skip_cells[key]
            cell.outputs = [new_output("error", ename=KILLED_KERNEL, evalue=reason,
                                       traceback=[f"{KILLED_KERNEL}: {reason}"])]
            return cell, resources
        _write_state(self.state_file, {"notebook": notebook, "running": index})
        try:
            return super().preprocess_cell(cell, resources, index)
        except DeadKernelError:
            _write_state(self.state_file, {"notebook": notebook, "running": index, "died": True})
            raise
        except Exception as e:  # e.g. a cell that ignores the interrupt sent at its time limit
            _write_state(self.state_file, {"notebook": notebook, "running": index, "stuck": f"{type(e).__name__}: {e}"})
            raise


class CapOutput(NbGraderPreprocessor):
    """Cut each code cell's text output to ``max_chars`` (nbgrader's LimitOutput counts lines: one 100 MB
    line passes it, and would then be copied into the graded notebook and the feedback page)."""

    max_chars = Integer(200_000, help="characters of text output kept per code cell").tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        budget = self.max_chars
        for out in cell.outputs:
            texts = []
            if out.output_type == "stream":
                texts = [("text", out)]
            elif out.output_type in ("display_data", "execute_result"):
                texts = [(k, out.data) for k in list(out.get("data", {})) if k.startswith("text/")]
            for key, holder in texts:
                value = holder[key] if isinstance(holder[key], str) else "".join(holder[key])
                keep = max(budget, 0)
                if len(value) > keep:
                    holder[key] = value[:keep] + f"\n... output cut: {len(value) - keep} more characters ...\n"
                budget -= len(value)
        return cell, resources


class StderrNotFailure(NbGraderPreprocessor):
    """Turn stderr streams of grade cells into stdout streams, so only raised errors fail a test."""

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type == "code" and is_grade(cell):
            for out in cell.outputs:
                if out.output_type == "stream" and out.name == "stderr":
                    out.name = "stdout"
                    out.text = "[stderr]\n" + out.text
        return cell, resources
