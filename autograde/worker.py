"""The trusted grading pass of one student, in its own process: ``python -m autograde.worker
JOBDIR``.

By the time this runs, the student's code has run in a sandbox (autograde.inside.runner) and been
checked again in another (autograde.verify); the grader validated what came out (autograde.boundary)
and wrote it into JOBDIR/job.json. JOBDIR is a folder no sandbox ever had mounted, so nothing here
follows a path a student could have planted. This process runs nbgrader's autograde with
``InjectOutputs`` in place of execution (no kernel, no student code), so nbgrader's gradebook,
scores and autograded notebook come from validated data only; then builds feedback pages from a
feedback-safe copy (no hidden test source, student output as text, student markdown escaped), and
writes ``JOBDIR/worker.json``: {"autograde": {...}, "feedback": {...}, "leaked": [...]}.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

T_START = time.perf_counter()
# Its memory, held with RLIMIT_DATA (boundary.limit_memory): measured 98 MB (VmData peak) for the
# reference notebooks; a job past this ends as that student's failed trusted pass, not as the
# machine's memory.
DATA_BYTES = 2 << 30


def feedback_config(c) -> None:
    """Feedback pages hold no hidden source, no rubric and no live markup (also formgrader's
    button)."""
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.preprocessors import GetGrades

    from autograde.plugins import FeedbackSafe

    c.GenerateFeedback.preprocessors = [FeedbackSafe, GetGrades, CSSHTMLHeaderPreprocessor]
    # nbconvert drops active markup from markdown (a written answer)
    c.HTMLExporter.sanitize_html = True


def config(job: dict, course_dir: Path):
    """nbgrader configuration of one grading pass (a Config object: nbgrader ignores --config)."""
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbgrader.preprocessors import (
        AssignLatePenalties,
        CheckCellMetadata,
        LimitOutput,
        SaveAutoGrades,
    )
    from traitlets.config import Config

    from autograde.plugins import CapOutput, InjectOutputs, StderrNotFailure

    c = Config()
    c.CourseDirectory.root = str(course_dir)
    c.CourseDirectory.source_directory = "source"
    c.CourseDirectory.submitted_directory = "submitted"
    c.CourseDirectory.autograded_directory = "autograded"
    c.CourseDirectory.feedback_directory = "feedback"
    c.CourseDirectory.db_url = f"sqlite:///{course_dir / 'gradebook.db'}"
    c.Autograde.autograde_preprocessors = [
        InjectOutputs,
        CapOutput,
        StderrNotFailure,
        ClearMetadataPreprocessor,
        LimitOutput,
        SaveAutoGrades,
        AssignLatePenalties,
        CheckCellMetadata,
    ]
    c.InjectOutputs.outputs = job["outputs"]
    c.InjectOutputs.failures = job["failures"]
    feedback_config(c)
    from autograde.deadlines import Policy, feedback_notes, plugin_config

    # nbgrader's AssignLatePenalties asks the course's policy (autograde/deadlines.py); the page
    # says when and how late
    plugin_config(c, Policy(**job.get("late_policy") or {}))
    if job.get("late_note"):
        feedback_notes(c, {f"{job['student']}/{job['assignment']}": job["late_note"]})
    return c


def main(jobdir: str) -> int:
    """Autograde (no execution), then feedback; always writes worker.json unless killed."""
    import nbformat
    from nbgrader.apps import NbGraderAPI
    from nbgrader.utils import temp_attrs

    from autograde.course import hidden_lines
    from autograde.inside.sanitize import feedback_safe

    root = Path(jobdir)
    job = json.loads((root / "job.json").read_text())
    course_dir = root / "course"
    a, s = job["assignment"], job["student"]
    api = NbGraderAPI(config=config(job, course_dir))
    t0 = time.perf_counter()
    out: dict = {"autograde": api.autograde(a, s, force=True, create=True)}
    out["seconds"] = {
        "startup": round(t0 - T_START, 2),
        "autograde": round(time.perf_counter() - t0, 2),
    }
    if out["autograde"]["success"]:
        leaked, withhold = [], set()
        for name in job["notebooks"]:
            graded = course_dir / "autograded" / s / a / f"{name}.ipynb"
            if not graded.exists():
                continue
            source = nbformat.read(job["source_notebooks"][name], as_version=4)
            release = nbformat.read(job["release_notebooks"][name], as_version=4)
            safe = feedback_safe(nbformat.read(str(graded), as_version=4), source, release)
            # The guard reads only the text the harness puts on the page (locked cells: tests,
            # questions), never the student's own cells and outputs: hidden source never reaches a
            # sandbox, so a hidden line there was typed by the student, and withholding their page
            # for it would tell them their guess was right
            ours = "\n".join(
                c.source
                for c in safe.cells
                if c.get("metadata", {}).get("nbgrader", {}).get("locked")
            )
            secret = hidden_lines(source)
            if any(line in ours for line in secret):
                leaked += [line for line in secret if line in ours]
                withhold.add(name)
            dest = course_dir / "feedback_src" / s / a / f"{name}.ipynb"
            dest.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(safe, str(dest))
        with temp_attrs(api.coursedir, autograded_directory="feedback_src"):
            t0 = time.perf_counter()
            out["feedback"] = api.generate_feedback(a, s, force=True)
            out["seconds"]["feedback"] = round(time.perf_counter() - t0, 2)
        for name in withhold:
            html = course_dir / "feedback" / s / a / f"{name}.html"
            if html.exists():
                html.unlink()  # never hand out a page whose own text quotes hidden tests
        out["leaked"] = leaked
    (root / "worker.json").write_text(json.dumps(out))
    return 0


def run(jobdir: str) -> int:
    """The worker process's life, whether started plainly or forked (autograde.forkserver): its
    memory limit, then ``main``."""
    from autograde.boundary import limit_memory

    limit_memory(DATA_BYTES)
    return main(jobdir)


if __name__ == "__main__":
    sys.exit(run(sys.argv[1]))
