"""OUT as an nbgrader course: merge per-student gradebooks into OUT/gradebook.db for manual grading,
and export.

Each student was graded with a throwaway gradebook (copied to
``OUT/gradebooks/<student>/<assignment>.db``). ``merge_gradebooks`` copies their automatic scores
and comments into ``OUT/gradebook.db`` (created with the assignments' definitions by nbgrader's
generate_assignment), never overwriting a manual score an instructor already entered, and writes
``OUT/nbgrader_config.py`` so that formgrader opened in OUT shows the submissions
(``OUT/autograded/``). ``export`` rewrites ``OUT/grades.csv`` with the manual scores included.
``import_roster`` gives students their names and emails (a CSV ``id, first, last, email`` kept as
``OUT/roster.csv`` and applied again at every merge), so formgrader lists them by name.
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from autograde.course import SAFE_ID, Course, hold, write_atomic
from autograde.deadlines import copy_into, feedback_notes, notes, refresh_penalty
from autograde.grades_csv import write_csv
from autograde.record import Condition, GradeRecord, Status
from autograde.spreadsheet import csv_text, uncell

ROSTER_FIELDS = ["id", "first", "last", "email"]


def read_roster(path: Path) -> list[dict[str, str]]:
    """Rows of a roster CSV with header ``id, first, last, email`` (extra columns ignored);
    ValueError if malformed."""
    # a spreadsheet's BOM is not part of the first header
    text = Path(path).read_text(encoding="utf-8-sig")
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip().lower() for h in reader.fieldnames or []]
    missing = [f for f in ROSTER_FIELDS if f not in header]
    if missing:
        raise ValueError(
            f"{path}: the roster needs the columns {', '.join(ROSTER_FIELDS)}; missing "
            f"{', '.join(missing)}"
        )
    rows, seen = [], set()
    for n, raw in enumerate(reader, start=2):
        # uncell: OUT/roster.csv is written through spreadsheet.cell (a name "=1+1" is kept as
        # "'=1+1")
        row = {
            k.strip().lower(): uncell((v or "").strip()) for k, v in raw.items() if k is not None
        }
        sid = row["id"]
        if not sid:
            raise ValueError(f"{path}, line {n}: empty id")
        if "/" in sid or sid in (".", "..") or sid != sid.strip():
            raise ValueError(f"{path}, line {n}: id {sid!r} cannot be a folder name")
        if not SAFE_ID.match(sid):
            raise ValueError(
                f"{path}, line {n}: id {sid!r} is not a student id the harness grades (letters, "
                "digits and . _ @ + -, at most 100, starting with a letter or digit)"
            )
        if sid in seen:
            raise ValueError(f"{path}, line {n}: id {sid!r} appears twice")
        seen.add(sid)
        rows.append({f: row[f] if f == "id" else _plain(row[f]) for f in ROSTER_FIELDS})
    return rows


def _plain(text: str) -> str:
    """A name or e-mail address as formgrader may show it: formgrader writes roster names into its
    pages unescaped (a student's LMS display name ``<img onerror=...>`` ran script there), so the
    characters that make markup and control characters are dropped; 200 characters at most."""
    return "".join(ch for ch in text if ch not in '<>&"`' and (ch.isprintable() or ch == " "))[:200]


def _apply_roster(gb, rows: list[dict[str, str]]) -> None:
    for r in rows:
        gb.update_or_create_student(
            r["id"],
            first_name=r["first"] or None,
            last_name=r["last"] or None,
            email=r["email"] or None,
        )


def import_roster(out: Path, roster: Path) -> int:
    """Copy ``roster`` to OUT/roster.csv and give OUT/gradebook.db's students their names; return
    the row count."""
    from nbgrader.api import Gradebook

    out = Path(out)
    rows = read_roster(roster)
    out.mkdir(parents=True, exist_ok=True)
    text = csv_text(ROSTER_FIELDS, ([r[f] for f in ROSTER_FIELDS] for r in rows))
    write_atomic(out / "roster.csv", text)
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        _apply_roster(gb, rows)
    return len(rows)


def _config_text(out: Path, course: Course) -> str:
    return (
        "# Written by `python -m autograde grade`: this folder is an nbgrader course for manual "
        "grading.\n"
        "c = get_config()\n"
        f"c.CourseDirectory.root = {str(out)!r}\n"
        f"c.CourseDirectory.source_directory = {str(course.solutions)!r}\n"
        "c.CourseDirectory.autograded_directory = 'autograded'\n"
        "c.CourseDirectory.feedback_directory = 'feedback'\n"
        f"c.CourseDirectory.db_url = {'sqlite:///' + str(out / 'gradebook.db')!r}\n"
        "# formgrader's Generate Feedback: no hidden test source, no rubric, no live markup "
        "(autograde.plugins)\n"
        "from autograde.worker import feedback_config\n"
        "feedback_config(c)\n"
    )


def _ensure_assignments(out: Path, course: Course, assignments: list[str]) -> None:
    """Create or update the assignments' definitions in OUT/gradebook.db (nbgrader
    generate_assignment)."""
    from nbgrader.apps import NbGraderAPI
    from traitlets.config import Config

    with tempfile.TemporaryDirectory(prefix="autograde-merge-") as tmp:
        c = Config()
        c.CourseDirectory.root = str(course.root)
        c.CourseDirectory.source_directory = str(course.solutions)
        c.CourseDirectory.release_directory = str(Path(tmp) / "release")
        c.CourseDirectory.db_url = f"sqlite:///{out / 'gradebook.db'}"
        api = NbGraderAPI(config=c)
        for a in assignments:
            res = api.generate_assignment(a, force=True, create=True)
            if not res["success"]:
                raise RuntimeError(
                    f"could not add {a} to {out / 'gradebook.db'}:\n{res.get('error', '')}"
                )


def merge_gradebooks(grader, records: list[dict]) -> None:
    """Copy automatic grades of every graded record into OUT/gradebook.db, then export grades.csv.
    Other assignments' (and other students') entries in OUT/gradebook.db are left as they are: one
    OUT holds the whole course (test_course_folder.py)."""
    from nbgrader.api import Gradebook

    out, course = grader.out, grader.course
    assignments = sorted({r["assignment"] for r in records})
    if not assignments:
        return
    _ensure_assignments(out, course, assignments)
    with warnings.catch_warnings(), Gradebook(f"sqlite:///{out / 'gradebook.db'}") as main:
        # nbgrader's add_submission trips SQLAlchemy autoflush warnings that do not affect the
        # result
        warnings.simplefilter("ignore", category=Warning)
        _merge_records(main, out, records)
        if (out / "roster.csv").exists():
            _apply_roster(main, read_roster(out / "roster.csv"))
    write_atomic(out / "nbgrader_config.py", _config_text(out, course))
    export(out)


def _merge_records(main, out: Path, records: list[dict]) -> None:
    """Each record's automatic scores and comments, from its student's gradebook (OUT/gradebooks/),
    into ``main``; a manual score already there stays (it needs a new look only if that written
    answer changed)."""
    from nbgrader.api import Gradebook, MissingEntry

    for r in records:
        if not SAFE_ID.match(r["student"]):
            # not a student id (`invalid_name`): never graded, never in a gradebook (and a name that
            # is not UTF-8, a white-box red team's folder, cannot even be looked up there)
            continue
        src = out / "gradebooks" / r["student"] / f"{r['assignment']}.db"
        # nothing graded (missing, invalid, wall-clock limit): drop an older result
        if not src.exists():
            try:
                main.remove_submission(r["assignment"], r["student"])
            except MissingEntry:
                pass
            continue
        main.update_or_create_student(r["student"])
        main.update_or_create_submission(r["assignment"], r["student"])
        with Gradebook(f"sqlite:///{src}") as one:
            try:
                sub = one.find_submission(r["assignment"], r["student"])
            except MissingEntry:
                continue
            changed = set(r.get("changed_answers", []))
            for nb in sub.notebooks:
                for g in nb.grades:
                    tgt = main.find_grade(g.name, nb.name, r["assignment"], r["student"])
                    tgt.auto_score = g.auto_score
                    # an instructor's manual score survives regrading; it needs a new look only if
                    # the student's answer itself changed since the last grading
                    if tgt.manual_score is None:
                        tgt.needs_manual_grade = g.needs_manual_grade
                    else:
                        tgt.needs_manual_grade = f"{nb.name}/{g.name}" in changed
                for cm in nb.comments:
                    tgt = main.find_comment(cm.name, nb.name, r["assignment"], r["student"])
                    tgt.auto_comment = cm.auto_comment
            # timestamp, extension, due date, penalties
            copy_into(sub, main, r["assignment"], r["student"])
        main.db.commit()


# ------------------------------------------------------------------------------ one course folder
# (issue 34, 7) per <student>/<assignment>/, beside details/ and gradebooks/
RESULT_DIRS = ("autograded", "feedback")


@dataclass
class Folded:
    """What ``course_folder`` did: assignments in the gradebook, assignments folded in from older
    folders (with their student count), manual marks copied, and what it left alone (with the
    reason)."""

    assignments: list[str] = field(default_factory=list)
    folded: dict[str, int] = field(default_factory=dict)
    marks: int = 0
    skipped: list[str] = field(default_factory=list)


def course_folder(out: Path, course: Course, sources: Sequence[Path] = (), log=print) -> Folded:
    """Make OUT the course's one nbgrader course folder, which formgrader serves whole
    (docs/instructors.md, section 4): every released assignment in OUT/gradebook.db (formgrader
    lists each, graded or not; the due date of one not yet graded from the course file), the results
    of per-assignment output folders ``sources`` (``graded/02`` as earlier terms made them) folded
    in with their manual marks and comments, and OUT/nbgrader_config.py and grades.csv written. An
    assignment OUT already holds results for is never taken from a source (so running it twice
    changes nothing); a regrade later keeps every assignment's marks."""
    from nbgrader.api import Gradebook

    from autograde.deadlines import load

    out = Path(out).resolve()
    done = Folded()
    with hold(out):
        records = []
        for src in sources:
            records += _fold_in(Path(src).resolve(), out, course, done)
        done.assignments = [
            a for a in course.assignments() if course.release_notebook(a, a).exists()
        ]
        _ensure_assignments(
            out, course, sorted(set(done.assignments) | {r["assignment"] for r in records})
        )
        due = load(course.deadlines_file).due
        with warnings.catch_warnings(), Gradebook(f"sqlite:///{out / 'gradebook.db'}") as main:
            warnings.simplefilter("ignore", category=Warning)
            _merge_records(main, out, records)
            for src in sources:
                done.marks += _copy_marks(Path(src).resolve() / "gradebook.db", main, records, out)
            # graded ones got theirs from the grading (deadlines.copy_into)
            for a in done.assignments:
                if a in due and not main.find_assignment(a).submissions:
                    main.update_or_create_assignment(a, duedate=due[a].replace(tzinfo=None))
            main.db.commit()
            if (out / "roster.csv").exists():
                _apply_roster(main, read_roster(out / "roster.csv"))
        write_atomic(out / "nbgrader_config.py", _config_text(out, course))
        export(out)
    return done


def _fold_in(src: Path, out: Path, course: Course, done: Folded) -> list[dict]:
    """Copy an older output folder's results (details/, gradebooks/, autograded/, feedback/, per
    student and assignment; links and odd names left behind) into OUT, for the assignments OUT holds
    no results for yet; return the records copied (their manual marks follow in ``_copy_marks``)."""
    if src == out:
        return []
    if not (src / "details").is_dir():
        raise ValueError(f"{src} is not an output folder of `grade` (it has no details/)")
    held = {p.stem for p in (out / "details").glob("*/*.json")}
    found: dict[str, list[Path]] = {}
    for p in sorted((src / "details").glob("*/*.json")):
        if p.is_symlink() or p.parent.is_symlink():
            continue
        found.setdefault(p.stem, []).append(p)
    records = []
    for a, paths in sorted(found.items()):
        if a in held:
            done.skipped.append(f"{a} from {src}: {out} already holds results for it (kept)")
            continue
        if a not in course.assignments():
            done.skipped.append(f"{a} from {src}: not an assignment of this course")
            continue
        for p in paths:
            student = p.parent.name
            if not SAFE_ID.match(student):
                done.skipped.append(f"{a} from {src}: folder {student!r} is not a student id")
                continue
            record = json.loads(p.read_text(encoding="utf-8"))
            if record.get("student") != student or record.get("assignment") != a:
                done.skipped.append(f"{a} from {src}: {p} names another student or assignment")
                continue
            for rel in [
                Path("details") / student / f"{a}.json",
                Path("gradebooks") / student / f"{a}.db",
                *[Path(d) / student / a for d in RESULT_DIRS],
            ]:
                _copy_plain(src / rel, out / rel)
            record["changed_answers"] = []
            records.append(record)
        done.folded[a] = sum(1 for r in records if r["assignment"] == a)
    if (src / "roster.csv").is_file() and not (out / "roster.csv").exists():
        _copy_plain(src / "roster.csv", out / "roster.csv")
    return records


def _copy_plain(src: Path, dest: Path) -> None:
    """Regular files at or under ``src`` to the same places under ``dest``; links are never followed
    or copied."""
    if src.is_symlink() or not src.exists():
        return
    files = (
        [src]
        if src.is_file()
        else [
            p
            for p in sorted(src.rglob("*"))
            if p.is_file() and not any(q.is_symlink() for q in [p, *p.parents])
        ]
    )
    for p in files:
        target = dest if p == src else dest / p.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(p, target.with_name(f".{target.name}.tmp"))
        os.replace(target.with_name(f".{target.name}.tmp"), target)


def _copy_marks(db: Path, main, records: list[dict], out: Path) -> int:
    """Manual scores, extra credit and comments of the folded records, from their older folder's
    gradebook (where formgrader stored them) into ``main``; returns the number of marks copied."""
    from nbgrader.api import Gradebook, MissingEntry

    if not db.is_file():
        return 0
    n = 0
    with Gradebook(f"sqlite:///{db}") as old:
        for r in records:
            try:
                sub = old.find_submission(r["assignment"], r["student"])
            except MissingEntry:
                continue
            for nb in sub.notebooks:
                for g in nb.grades:
                    if g.manual_score is None and g.extra_credit is None:
                        continue
                    try:
                        tgt = main.find_grade(g.name, nb.name, r["assignment"], r["student"])
                    except MissingEntry:
                        continue
                    tgt.manual_score, tgt.extra_credit = g.manual_score, g.extra_credit
                    tgt.needs_manual_grade = g.needs_manual_grade
                    n += 1
                for cm in nb.comments:
                    if cm.manual_comment is None:
                        continue
                    try:
                        main.find_comment(
                            cm.name, nb.name, r["assignment"], r["student"]
                        ).manual_comment = cm.manual_comment
                    except MissingEntry:
                        continue
    main.db.commit()
    return n


def export(out: Path) -> list[dict]:
    """Rewrite OUT/grades.csv from OUT/details/ plus manual scores entered in OUT/gradebook.db."""
    from nbgrader.api import Gradebook, MissingEntry

    out = Path(out)
    records = [json.loads(p.read_text()) for p in sorted((out / "details").glob("*/*.json"))]
    db = out / "gradebook.db"
    if db.exists():
        with Gradebook(f"sqlite:///{db}") as gb:
            for i, r in enumerate(records):
                if not (out / "gradebooks" / r["student"] / f"{r['assignment']}.db").exists():
                    continue
                try:
                    sub = gb.find_submission(r["assignment"], r["student"])
                except MissingEntry:
                    continue
                rec = GradeRecord.from_json(r)
                rec.score = round(float(sub.score), 6)
                pending = [
                    g.name for nb in sub.notebooks for g in nb.grades if g.needs_manual_grade
                ]
                rec.conditions = [
                    c for c in rec.conditions if c.kind is not Status.NEEDS_MANUAL_GRADE
                ]
                rec.conditions += [
                    Condition(Status.NEEDS_MANUAL_GRADE, f"{g!r} is graded by hand")
                    for g in pending
                ]
                records[i] = r = rec.finish().to_json()
                # the late policy on the final score (manual marks included)
                refresh_penalty(r, gb)
    write_csv(out / "grades.csv", records)
    return records


def regenerate_feedback(out: Path) -> list[str]:
    """Rebuild every feedback page in OUT from OUT/gradebook.db (manual scores, comments) and
    OUT/autograded/.

    Hidden-free as the pages that `grade` writes (autograde.plugins.FeedbackSafe); returns the pages
    written.
    """
    from nbgrader.apps import NbGraderAPI
    from traitlets.config import Config

    from autograde.worker import feedback_config

    out = Path(out).resolve()
    # late penalties on the final scores first: the pages show what nbgrader's gradebook holds
    export(out)
    c = Config()
    c.CourseDirectory.root = str(out)
    c.CourseDirectory.autograded_directory = "autograded"
    c.CourseDirectory.feedback_directory = "feedback"
    c.CourseDirectory.db_url = f"sqlite:///{out / 'gradebook.db'}"
    feedback_config(c)
    # when submitted, the due date, how late (autograde/deadlines.py)
    feedback_notes(c, notes(out))
    api = NbGraderAPI(config=c)
    written = []
    for p in sorted((out / "autograded").glob("*/*")):
        student, assignment = p.parent.name, p.name
        res = api.generate_feedback(assignment, student, force=True)
        if not res["success"]:
            raise RuntimeError(
                f"feedback for {student}/{assignment} failed: {res.get('error', '')[-500:]}"
            )
        written += [
            str(h) for h in sorted((out / "feedback" / student / assignment).glob("*.html"))
        ]
    return written
