"""`grades_csv`: ``OUT/grades.csv``, one row per finished record (autograde/record.py), written by
grade, cluster and gradebook's export alike."""

from __future__ import annotations

from pathlib import Path

from autograde import deadlines
from autograde.course import write_atomic
from autograde.spreadsheet import csv_text

CSV_FIELDS = ["student", "assignment", "score", "max_score", "status", "flags", "detail"]
# issue 34: when, how late, the penalty (new columns; the ones above unchanged)
CSV_FIELDS += deadlines.CSV_FIELDS


def write_csv(path: Path, records) -> None:
    """grades.csv from finished records' dicts: one row per (student, assignment), sorted,
    atomically replaced; folder and notebook names in it are the students', so it is written by
    spreadsheet.csv_text (test_spreadsheet.py)."""
    rows = [
        [
            r["student"],
            r["assignment"],
            f"{r['score']:g}",
            f"{r['max_score']:g}",
            r["status"],
            "; ".join(r.get("flags", [])),
            r["detail"],
            *deadlines.csv_fields(r),
        ]
        for r in sorted(records, key=lambda r: (r["student"], r["assignment"]))
    ]
    write_atomic(path, csv_text(CSV_FIELDS, rows))
