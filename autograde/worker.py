"""One student's grading run, in its own process: ``python -m autograde.worker JOBDIR``.

The harness prepares JOBDIR (a throwaway nbgrader course: gradebook copied from the assignment's template,
the sanitized submission, a kernelspec) and reads the results back. This process runs nbgrader's autograde,
then builds feedback HTML from a feedback-safe copy of each autograded notebook, and writes
``JOBDIR/worker.json``: {"autograde": {...}, "feedback": {...}, "leaked": [...]}.
"""

from __future__ import annotations

import html as htmllib
import json
import re
import sys
import time
from pathlib import Path

T_START = time.perf_counter()


def config(job: dict, course_dir: Path):
    """nbgrader configuration of one grading run (given as a Config object: nbgrader ignores --config)."""
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from traitlets.config import Config

    from autograde.plugins import CapOutput, GradingExecute, StderrNotFailure
    from nbgrader.preprocessors import AssignLatePenalties, CheckCellMetadata, LimitOutput, SaveAutoGrades

    c = Config()
    c.CourseDirectory.root = str(course_dir)
    c.CourseDirectory.source_directory = "source"
    c.CourseDirectory.submitted_directory = "submitted"
    c.CourseDirectory.autograded_directory = "autograded"
    c.CourseDirectory.feedback_directory = "feedback"
    c.CourseDirectory.db_url = f"sqlite:///{course_dir / 'gradebook.db'}"
    c.Autograde.autograde_preprocessors = [GradingExecute, CapOutput, StderrNotFailure, ClearMetadataPreprocessor,
                                           LimitOutput, SaveAutoGrades, AssignLatePenalties, CheckCellMetadata]
    c.Execute.timeout = int(job["cell_timeout"])
    c.GradingExecute.kernel_name = "autograde-python"
    c.GradingExecute.skip_cells = job.get("skip_cells", {})
    c.GradingExecute.state_file = str(course_dir.parent / "state.json")
    if job.get("ipc"):
        # a sandboxed kernel has no network (not even loopback): connect over Unix sockets
        c.KernelManager.transport = "ipc"
        c.KernelManager.ip = job["ipc"]  # a short path: a socket's path has at most 107 bytes
    return c


def main(jobdir: str) -> int:
    """Autograde, then feedback; always writes worker.json unless killed."""
    import nbformat

    from autograde.sanitize import feedback_safe
    from autograde.course import hidden_lines
    from nbgrader.apps import NbGraderAPI
    from nbgrader.utils import temp_attrs

    root = Path(jobdir)
    job = json.loads((root / "job.json").read_text())
    course_dir = root / "course"
    a, s = job["assignment"], job["student"]
    api = NbGraderAPI(config=config(job, course_dir))
    t0 = time.perf_counter()
    out: dict = {"autograde": api.autograde(a, s, force=True, create=True)}
    out["seconds"] = {"startup": round(t0 - T_START, 2), "autograde": round(time.perf_counter() - t0, 2)}
    if out["autograde"]["success"]:
        leaked = []
        for name in job["notebooks"]:
            graded = course_dir / "autograded" / s / a / f"{name}.ipynb"
            if not graded.exists():
                continue
            source = nbformat.read(job["source_notebooks"][name], as_version=4)
            release = nbformat.read(job["release_notebooks"][name], as_version=4)
            safe = feedback_safe(nbformat.read(str(graded), as_version=4), source, release)
            dest = course_dir / "feedback_src" / s / a / f"{name}.ipynb"
            dest.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(safe, str(dest))
        with temp_attrs(api.coursedir, autograded_directory="feedback_src"):
            t0 = time.perf_counter()
            out["feedback"] = api.generate_feedback(a, s, force=True)
            out["seconds"]["feedback"] = round(time.perf_counter() - t0, 2)
        for name in job["notebooks"]:
            html = course_dir / "feedback" / s / a / f"{name}.html"
            if html.exists():
                # compare against the text a reader sees: tags (syntax highlighting) stripped, entities decoded
                text = htmllib.unescape(re.sub(r"<[^>]+>", "", html.read_text(encoding="utf-8")))
                secret = hidden_lines(nbformat.read(job["source_notebooks"][name], as_version=4))
                leaked += [line for line in secret if line in text]
                if any(line in text for line in secret):
                    html.unlink()  # never hand out a page that quotes hidden tests
        out["leaked"] = leaked
    (root / "worker.json").write_text(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
