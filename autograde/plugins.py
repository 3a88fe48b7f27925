"""nbgrader preprocessors of the trusted grading pass (imported by the worker process, never in a
sandbox).

- ``InjectOutputs``: takes the place of nbgrader's Execute. The notebook was already run in a
sandbox
  (autograde.inside.runner); this puts back what each cell printed there, as inert text validated by
  autograde.boundary, and adds an error to every autograded test cell that failed the verification
  outside the kernel (autograde.verify), so nbgrader's own scoring gives each cell the lower of the
  two results.
- ``StderrNotFailure``: nbgrader scores 0 for any grade cell that wrote to stderr
(``utils.determine_grade``
  treats a stderr stream like an error). A warning logged by correct code is not a failure, so
  stderr streams in grade cells become stdout streams headed "[stderr]" (text kept for the
  feedback): a test cell now fails only by raising, which is how every check reports failure.
"""

from __future__ import annotations

from nbformat.v4 import new_output
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_grade
from traitlets import Dict, Integer

OUTSIDE = "CheckFailed"  # as the check engine's own exception: the student sees one kind of failure


def output_node(item: dict):
    """An nbformat output from one validated text item (autograde.boundary.cell_outputs)."""
    if item["kind"] == "error":
        return new_output(
            "error",
            ename=item["ename"],
            evalue=item["evalue"],
            traceback=item["traceback"].splitlines() or [f"{item['ename']}: {item['evalue']}"],
        )
    return new_output("stream", name=item["name"], text=item["text"])


class InjectOutputs(NbGraderPreprocessor):
    """Execute's stand-in: outputs from the sandboxed run, failures from the verification outside
    the kernel."""

    outputs = Dict({}, help="'<notebook>/<cell index>' -> list of validated text items").tag(
        config=True
    )
    failures = Dict(
        {}, help="'<notebook>/<grade_id>' -> why its checks failed outside the kernel"
    ).tag(config=True)

    def preprocess_cell(self, cell, resources, index):
        if cell.cell_type != "code":
            return cell, resources
        notebook = resources.get("nbgrader", {}).get("notebook", "")
        cell.outputs = [output_node(item) for item in self.outputs.get(f"{notebook}/{index}", [])]
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        why = self.failures.get(f"{notebook}/{gid}")
        if why is not None and is_grade(cell):
            cell.outputs.append(
                new_output(
                    "error",
                    ename=OUTSIDE,
                    evalue=why,
                    traceback=[
                        f"{OUTSIDE}: {why}",
                        "(checked in a fresh process, outside your notebook's kernel)",
                    ],
                )
            )
        return cell, resources


class FeedbackSafe(NbGraderPreprocessor):
    """What a student may see of an autograded notebook: no hidden test source, no rubric, outputs
    as text.

    The first step of every feedback page, ours (worker, ``python -m autograde feedback``) and
    formgrader's "Generate Feedback" button (OUT/nbgrader_config.py sets it): hidden test blocks are
    cut from the cells' source and their tracebacks shortened to the message; the rubric cells of
    the instructor's copy are dropped; an output keeps only its text (no HTML, JavaScript or images,
    which a student's code controls); the student's own markdown is shown escaped, as typed.
    """

    def preprocess(self, nb, resources):
        from autograde.inside.sanitize import inert_student_cells
        from autograde.rubric import strip_rubrics

        # the student's own markdown and raw cells (a written answer, a note) shown as the text they
        # typed: nbgrader's feedback template renders markdown without nbconvert's sanitizer
        nb = inert_student_cells(strip_rubrics(nb))
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell, resources, index):
        from autograde.course import HIDDEN_BLOCK

        if cell.cell_type != "code":
            return cell, resources
        hidden = bool(HIDDEN_BLOCK.search(cell.source))
        cell.source = HIDDEN_BLOCK.sub("", cell.source)
        kept = []
        for out in cell.get("outputs", []):
            if out.output_type == "error":
                if hidden:
                    out.traceback = [f"{out.ename}: {out.evalue}"]
                kept.append(out)
            elif out.output_type == "stream":
                kept.append(out)
            elif "text/plain" in out.get("data", {}):
                text = out.data["text/plain"]
                kept.append(
                    new_output(
                        "stream",
                        name="stdout",
                        text=(text if isinstance(text, str) else "".join(text)) + "\n",
                    )
                )
        cell.outputs = kept
        return cell, resources


class CapOutput(NbGraderPreprocessor):
    """Cut each code cell's text output to ``max_chars`` (nbgrader's LimitOutput counts lines: one
    100 MB line passes it, and would then be copied into the graded notebook and the feedback
    page)."""

    max_chars = Integer(200_000, help="characters of text output kept per code cell").tag(
        config=True
    )

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
                    holder[key] = (
                        value[:keep]
                        + f"\n... output cut: {len(value) - keep} more characters ...\n"
                    )
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
