"""`accounts`: the import record ``SUBMISSIONS/.lms/<assignment>.json``: which LMS account and zip
member each student folder came from. ``lms-import`` writes it (autograde/lms.py); ``lms-export``,
the feedback zips (autograde/feedback_zip.py) and the submission times (autograde/deadlines.py: a
Moodle zip member's time, Canvas's late flag) read it. Its own module so that deadlines reads it
without importing lms, which imports deadlines.
"""

from __future__ import annotations

import json
from pathlib import Path

# SUBMISSIONS/.lms/<assignment>.json; `grade` skips folders whose names begin with "."
RECORD_DIR = ".lms"


def record_path(submissions: Path, assignment: str) -> Path:
    """Where ``import_zip`` keeps which LMS account and zip member each student folder came from."""
    return Path(submissions) / RECORD_DIR / f"{assignment}.json"


def read_record(submissions: Path | None, assignment: str) -> dict[str, dict]:
    """Student folder -> the LMS account it was imported from ({} when there is no record)."""
    if submissions is None:
        return {}
    path = record_path(submissions, assignment)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not an import record")
    return data
