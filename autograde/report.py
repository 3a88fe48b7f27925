"""The class report: what a class got right and wrong, from OUT (``python -m autograde report OUT
DEST``).

Read from ``OUT/details/<student>/<assignment>.json`` (one record per graded notebook, written by
`grade`) with the manual marks of ``OUT/gradebook.db`` folded in exactly where `export` folds them
(a grade's manual score replaces its automatic one). Written to DEST:
- ``exercises.csv``: per exercise (assignment, notebook, grade id) the score distribution: students,
mean, median,
  full / partial / zero marks, still to grade by hand;
- ``failures.csv``: per exercise the most frequent failure messages of its checks (the
instructor-side messages in
  details/, numbers folded to ``#`` so that "got 0.31" and "got 0.29" count as one misconception),
  with a count and one message as it was;
- ``students.csv``: per student and assignment the total, the status and each exercise's points;
- ``report.html``: the same three tables and one plot per assignment (PNG as data: URIs, no files
beside it). Every CSV goes through spreadsheet.csv_text; every string in the page goes through
html.escape (student folder names and failure messages are the students' doing). Cost: well under a
second per 100 records plus ~0.3 s per plot.
"""

from __future__ import annotations

import base64
import html
import io
import json
import re
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from autograde.course import write_atomic
from autograde.spreadsheet import csv_text

TOP_FAILURES = 5  # messages listed per exercise
MESSAGE_CHARS = 300  # of one failure message kept (the first line)
# a number standing alone: "got 0.31", "shape (2, 3)"; not the 2 of softmax2 or the 03 of
# 03_sampling
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")


@dataclass
class Exercise:
    """One graded cell across the class."""

    assignment: str
    notebook: str
    grade_id: str
    title: str
    max_points: float
    # student -> points (manual marks included)
    scores: dict[str, float] = field(default_factory=dict)
    # students whose mark is still to be given by hand
    pending: list[str] = field(default_factory=list)
    failures: Counter = field(default_factory=Counter)  # folded message -> count
    # folded message -> one message as it was
    example: dict[str, str] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str, str]:
        return self.assignment, self.notebook, self.grade_id


def fold(message: str) -> str:
    """A failure message with numbers made ``#``, its first line only: one misconception, one
    key."""
    first = (message.strip().splitlines() or [""])[0][:MESSAGE_CHARS]
    return _NUMBER.sub("#", first)


def _records(out: Path, assignment: str | None) -> list[dict]:
    records = []
    for p in sorted((Path(out) / "details").glob("*/*.json")):
        r = json.loads(p.read_text(encoding="utf-8"))
        if assignment is None or r.get("assignment") == assignment:
            records.append(r)
    return records


def _manual_scores(
    out: Path, records: list[dict]
) -> dict[tuple[str, str, str, str], tuple[float, bool]]:
    """(student, assignment, notebook, grade id) -> (score, still needs a manual grade) from
    OUT/gradebook.db."""
    db = Path(out) / "gradebook.db"
    found: dict[tuple[str, str, str, str], tuple[float, bool]] = {}
    if not db.exists():
        return found
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(f"sqlite:///{db}") as gb:
        for r in records:
            try:
                sub = gb.find_submission(r["assignment"], r["student"])
            except MissingEntry:
                continue
            for nb in sub.notebooks:
                for g in nb.grades:
                    found[(r["student"], r["assignment"], nb.name, g.name)] = (
                        float(g.score or 0.0),
                        bool(g.needs_manual_grade),
                    )
    return found


def collect(out: Path, assignment: str | None = None) -> tuple[list[Exercise], list[dict]]:
    """The class's exercises (in notebook order) and its records, manual marks folded in."""
    records = _records(out, assignment)
    manual = _manual_scores(out, records)
    exercises: dict[tuple[str, str, str], Exercise] = {}
    for r in records:
        for nb, info in r.get("notebooks", {}).items():
            for t in info.get("tests", []):
                key = (r["assignment"], nb, t["grade_id"])
                ex = exercises.setdefault(
                    key,
                    Exercise(
                        *key, title=t.get("title", ""), max_points=float(t.get("max_points", 0.0))
                    ),
                )
                points, pending = (
                    float(t.get("points", 0.0)),
                    t.get("result") == "needs_manual_grade",
                )
                if (r["student"], *key) in manual:
                    points, pending = manual[(r["student"], *key)]
                ex.scores[r["student"]] = points
                if pending:
                    ex.pending.append(r["student"])
                if t.get("result") == "failed":
                    message = t.get("error") or "failed (no message)"
                    folded = fold(message)
                    ex.failures[folded] += 1
                    ex.example.setdefault(
                        folded,
                        message.strip().splitlines()[0][:MESSAGE_CHARS]
                        if message.strip()
                        else folded,
                    )
    return list(exercises.values()), records


def _g(x: float) -> str:
    return f"{x:.4g}"


def _done(ex: Exercise) -> list[float]:
    """The exercise's points of the students whose mark is given (a pending hand mark is not a
    zero)."""
    return [v for s, v in ex.scores.items() if s not in ex.pending]


def _outcomes(ex: Exercise) -> tuple[int, int, int, int]:
    """How many students got full points, partial, zero, and how many wait for a hand mark."""
    done = _done(ex)
    full = sum(v >= ex.max_points for v in done)
    zero = sum(v <= 0 for v in done) if ex.max_points > 0 else 0
    return full, len(done) - full - zero, zero, len(ex.pending)


def exercise_rows(exercises: list[Exercise]) -> list[list[str | int]]:
    """exercises.csv rows: the distribution of each exercise's points (pending hand marks not
    counted as zero)."""
    rows: list[list[str | int]] = []
    for ex in exercises:
        done = _done(ex)
        rows.append(
            [
                ex.assignment,
                ex.notebook,
                ex.grade_id,
                ex.title,
                _g(ex.max_points),
                len(done),
                _g(statistics.fmean(done)) if done else "",
                _g(statistics.median(done)) if done else "",
                *_outcomes(ex),
            ]
        )
    return rows


EXERCISE_FIELDS = [
    "assignment",
    "notebook",
    "grade_id",
    "title",
    "max_points",
    "students",
    "mean",
    "median",
    "full",
    "partial",
    "zero",
    "to_grade_by_hand",
]
FAILURE_FIELDS = [
    "assignment",
    "notebook",
    "grade_id",
    "title",
    "students_failing",
    "share",
    "message",
    "example",
]


def failure_rows(exercises: list[Exercise], top: int = TOP_FAILURES) -> list[list[str | int]]:
    """failures.csv rows: each exercise's most frequent failure messages, most frequent first."""
    rows: list[list[str | int]] = []
    for ex in exercises:
        n = len(ex.scores)
        for folded, count in sorted(ex.failures.items(), key=lambda kv: (-kv[1], kv[0]))[:top]:
            rows.append(
                [
                    ex.assignment,
                    ex.notebook,
                    ex.grade_id,
                    ex.title,
                    count,
                    f"{count / n:.0%}",
                    folded,
                    ex.example[folded],
                ]
            )
    return rows


def student_rows(
    exercises: list[Exercise], records: list[dict]
) -> tuple[list[str], list[list[str]]]:
    """students.csv: per student and assignment the total (manual marks included) and each
    exercise's points."""
    header = ["student", "assignment", "score", "max_score", "status"] + [
        f"{ex.notebook}/{ex.grade_id}" for ex in exercises
    ]
    rows = []
    for r in sorted(records, key=lambda r: (r["student"], r["assignment"])):
        mine = [ex for ex in exercises if ex.assignment == r["assignment"]]
        cells = {
            f"{ex.notebook}/{ex.grade_id}": (
                "(by hand)"
                if r["student"] in ex.pending
                else _g(ex.scores[r["student"]])
                if r["student"] in ex.scores
                else ""
            )
            for ex in mine
        }
        total = (
            sum(ex.scores.get(r["student"], 0.0) for ex in mine)
            if r.get("notebooks")
            else r.get("score", 0.0)
        )
        rows.append(
            [
                r["student"],
                r["assignment"],
                _g(total),
                _g(r.get("max_score", 0.0)),
                r.get("status", ""),
            ]
            + [cells.get(h, "") for h in header[5:]]
        )
    return header, rows


def _plot(exercises: list[Exercise], assignment: str) -> str:
    """One assignment as a PNG data: URI: per exercise stacked bars (full / partial / zero / by
    hand), and the histogram of the students' totals (manual marks included)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mine = [ex for ex in exercises if ex.assignment == assignment]
    labels = [f"{ex.notebook}/{ex.grade_id}" for ex in mine]
    parts: dict[str, list[int]] = {"full": [], "partial": [], "zero": [], "by hand": []}
    for ex in mine:
        for k, count in zip(parts, _outcomes(ex)):
            parts[k].append(count)
    fig, (ax, hx) = plt.subplots(
        1, 2, figsize=(11, 0.45 * len(mine) + 1.6), gridspec_kw={"width_ratios": [3, 2]}
    )
    left = [0] * len(mine)
    colors = {"full": "#2e7d32", "partial": "#f9a825", "zero": "#c62828", "by hand": "#9e9e9e"}
    for k, values in parts.items():
        ax.barh(labels, values, left=left, label=k, color=colors[k])
        left = [a + b for a, b in zip(left, values)]
    ax.invert_yaxis()
    ax.set_xlabel("students")
    ax.set_title(f"{assignment}: points per exercise")
    ax.legend(
        loc="upper center",
        bbox_to_anchor=(0.5, -0.25 if len(mine) < 4 else -0.1),
        ncol=4,
        fontsize="small",
    )
    totals: defaultdict[str, float] = defaultdict(float)
    for ex in mine:
        for student, v in ex.scores.items():
            totals[student] += v
    hx.hist(
        list(totals.values()),
        bins=min(20, max(5, len(totals) // 3)),
        range=(0, sum(e.max_points for e in mine)),
        color="#1565c0",
    )
    hx.set_xlabel("total points")
    hx.set_ylabel("students")
    hx.set_title("totals")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _table(header: list[str], rows: list[list]) -> str:
    e = html.escape
    head = "".join(f"<th>{e(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render_html(exercises: list[Exercise], records: list[dict]) -> str:
    """The report page: plots, then the exercise, failure and student tables; everything escaped."""
    e = html.escape
    assignments = sorted({ex.assignment for ex in exercises})
    plots = "".join(
        f"<h3>{e(a)}</h3><img alt='{e(a)} per exercise' src='{_plot(exercises, a)}'>"
        for a in assignments
    )
    header, students = student_rows(exercises, records)
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Class report</title>"
        "<style>body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid "
        "#ccc;padding:2px 6px;text-align:left}</style></head><body>"
        f"<h1>Class report</h1><p>{len(records)} record(s), {len(exercises)} exercise(s); manual "
        "marks included.</p><h2>Score distribution per exercise</h2>"
        + plots
        + _table(EXERCISE_FIELDS, exercise_rows(exercises))
        + "<h2>Most frequent failing checks</h2><p>Numbers in messages are shown as #; one "
        "example as it was.</p>"
        + _table(FAILURE_FIELDS, failure_rows(exercises))
        + "<h2>Students</h2>"
        + _table(header, students)
        + "</body></html>"
    )


def write_report(out: Path, dest: Path, assignment: str | None = None) -> list[Path]:
    """Write report.html, exercises.csv, failures.csv and students.csv into DEST; return their
    paths."""
    exercises, records = collect(out, assignment)
    if not records:
        raise ValueError(
            f"{out}/details holds no graded records" + (f" for {assignment}" if assignment else "")
        )
    dest = Path(dest)
    header, students = student_rows(exercises, records)
    files = {
        "exercises.csv": csv_text(EXERCISE_FIELDS, exercise_rows(exercises)),
        "failures.csv": csv_text(FAILURE_FIELDS, failure_rows(exercises)),
        "students.csv": csv_text(header, students),
        "report.html": render_html(exercises, records),
    }
    for name, text in files.items():
        write_atomic(dest / name, text)
    return [dest / name for name in files]
