"""nbgrader configuration for running `nbgrader ...` or formgrader from the repository root.

The harness (`python -m autograde ...`, see docs/instructors.md) does not read this file: nbgrader
ignores `--config`, so the harness builds the same settings in code for each throwaway course it
makes (autograde/release.py, autograde/worker.py). autograde/tests/test_config.py keeps the two in
step.
"""

import os

c = get_config()  # noqa: F821 (nbgrader provides get_config when it loads this file)

ROOT = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.root = ROOT
# instructor notebooks: solutions/<id>/<id>.ipynb
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "notebooks"  # generated student notebooks (committed)
c.CourseDirectory.submitted_directory = "submitted"  # collected submissions (git-ignored)
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(ROOT, "gradebook.db")
c.Execute.timeout = 120  # seconds per cell; the harness uses the same default (Course.cell_timeout)
