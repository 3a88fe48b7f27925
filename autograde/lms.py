"""Learning platforms in and out: an LMS "download all submissions" zip ->
SUBMISSIONS/<student>/<id>/<id>.ipynb, and OUT's final grades -> a CSV that Canvas's gradebook
import or Moodle's grade import reads.

File names in the downloads (documented by the platforms and by tools that read them;
docs/instructors.md):
- Canvas: one flat file per submitted file, ``<lastfirst>[_LATE]_<user id>_<submission id>_<file
name>``,
  where ``lastfirst`` is the student's name in lower case without spaces and a re-uploaded file may
  carry a ``-N`` suffix before its extension;
- Moodle: one folder per participant, ``<Full Name>_<participant id>_assignsubmission_file_/<file
name>``
  (Moodle >= 4.1: without the last ``_``; before 3.1: the same prefix on flat files);
  ``..._onlinetext_`` entries hold online text and are skipped.

The zip is untrusted: members are read (never extracted by their own paths), with a size limit, and
the destination is built only from the assignment id and a student id that is a plain folder name.
"""

from __future__ import annotations

import csv
import re
import unicodedata
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from autograde.accounts import read_record, record_path
from autograde.course import SAFE_ID, dump_json, shown, write_atomic
from autograde.record import Status
from autograde.spreadsheet import csv_text, uncell

MAX_NOTEBOOK_BYTES = 50 << 20
CANVAS = re.compile(
    r"^(?P<name>[^_/]+?)(?P<late>_LATE)?_(?P<uid>\d+)_(?P<sid>\d+)_(?P<file>[^/]+)$"
)
# Moodle >= 4.1 names the folder without the trailing "_" (mod/assign/feedback/file/importziplib.php
# reads both)
MOODLE = re.compile(
    r"^(?P<name>[^/]+?)_(?P<pid>\d+)_assign(?:submission)?_(?P<plugin>file|onlinetext)"
    r"(?:_?/(?P<path>.+)|_(?P<file>[^/]*))$"
)


@dataclass
class Entry:
    """One submitted notebook found in a download."""

    lms: str
    lms_id: str  # Canvas user id, Moodle participant id
    # the name as the download spells it (Canvas: lastfirst; Moodle: "First Last")
    name: str
    member: str  # path inside the zip
    file: str  # the submitted file's own name
    late: bool = False
    # Moodle: the zip member's time, ISO 8601 UTC (Canvas's zip holds none: deadlines.py);
    # Canvas: submitted_at from `--times` (autograde/canvas_times.py)
    submitted_at: str = ""
    # Canvas with `--times`: why this student has no time there (the _LATE flag is used)
    why_no_time: str = ""


NAME_COLLISION = "name_collision"


@dataclass
class Collision:
    """Several LMS accounts whose names match one roster row: an account renamed to a classmate's
    name (issue 37). None is dropped: an account the roster names by its id keeps that folder, every
    other one is placed under its own LMS id, and the instructor decides which is the roster's
    student."""

    student: str  # the roster id the names match
    # (lms, LMS id, name as the download spells it, folder placed in)
    accounts: list[tuple[str, str, str, str]]

    def line(self) -> str:
        held = ", ".join(
            f"{lms} id {uid} ({name}) -> {folder}/" for lms, uid, name, folder in self.accounts
        )
        return (
            f"{NAME_COLLISION}: {len(self.accounts)} LMS accounts match roster student "
            f"{self.student} by name: {held}; all kept: rename the right folder to {self.student}"
        )


@dataclass
class ImportResult:
    """What ``import_zip`` placed (student id -> zip member) and what it skipped, with the
    reason."""

    placed: dict[str, str] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    late: list[str] = field(default_factory=list)
    # students named by the LMS id: no roster row matched
    unmatched: list[str] = field(default_factory=list)
    collisions: list[Collision] = field(default_factory=list)
    # student folder -> the entry placed there
    accounts: dict[str, Entry] = field(default_factory=dict)


def _key(text: str) -> str:
    """A name reduced to lower-case letters and digits (accents folded), for matching a roster."""
    text = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in text.lower() if ch.isalnum() and not unicodedata.combining(ch))


def parse_member(member: str, lms: str = "auto") -> Entry | None:
    """The submission a zip member holds, or None if the name follows neither platform's scheme."""
    path = PurePosixPath(member)
    if lms in ("moodle", "auto"):
        m = MOODLE.match(member)
        if m:
            if m["plugin"] != "file":
                return None
            file = PurePosixPath(m["path"]).name if m["path"] else m["file"]
            return Entry("moodle", m["pid"], m["name"], member, file) if file else None
    if lms in ("canvas", "auto") and len(path.parts) == 1:
        m = CANVAS.match(member)
        if m:
            return Entry("canvas", m["uid"], m["name"], member, m["file"], late=bool(m["late"]))
    return None


def _notebook_stem(file: str) -> str:
    """The file's stem without Canvas's re-upload suffix (``hw-1.ipynb`` -> ``hw``)."""
    return re.sub(r"-\d+$", "", PurePosixPath(file).stem)


def _student_id(e: Entry, roster: list[dict] | None, result: ImportResult) -> str:
    if roster:
        ids = {r["id"] for r in roster}
        if e.lms_id in ids:
            return e.lms_id
        key = _key(e.name)
        if e.lms == "canvas":  # lastfirst
            hits = [r["id"] for r in roster if _key(r["last"] + r["first"]) == key]
        else:  # First Last
            hits = [r["id"] for r in roster if _key(r["first"] + r["last"]) == key]
        if len(hits) == 1:
            return hits[0]
        line = (
            f"{e.name} ({e.lms} id {e.lms_id}): "
            + ("no roster row" if not hits else f"{len(hits)} roster rows")
            + " with this name"
        )
        if line not in result.unmatched:  # once per student, not per file
            result.unmatched.append(line)
    return e.lms_id


def _apart(keyed: list[tuple[str, Entry]], result: ImportResult) -> dict[str, list[Entry]]:
    """Entries by student folder. Where several LMS accounts map to one student, each account the
    roster does not name by its own id moves to a folder named by that id, and the collision is
    reported (test_lms.py, test_name_collision_keeps_both_*): a display name is the student's to
    choose, the LMS id is not."""
    accounts: dict[str, dict[tuple[str, str], str]] = {}
    for student, e in keyed:
        accounts.setdefault(student, {})[(e.lms, e.lms_id)] = e.name
    by_student: dict[str, list[Entry]] = {}
    for student, e in keyed:
        folder = e.lms_id if len(accounts[student]) > 1 and e.lms_id != student else student
        by_student.setdefault(folder, []).append(e)
    for student, accs in sorted(accounts.items()):
        if len(accs) > 1:
            result.collisions.append(
                Collision(
                    student,
                    [
                        (lms, uid, name, student if uid == student else uid)
                        for (lms, uid), name in sorted(accs.items())
                    ],
                )
            )
    return by_student


def _notebook_entries(
    members: list[str], lms: str, rows: list[dict] | None, result: ImportResult
) -> list[tuple[str, Entry]]:
    """(student id, entry) for each notebook member named by the LMS's scheme; listed as skipped:
    a notebook named otherwise, and a member named by the scheme that is not a notebook."""
    keyed: list[tuple[str, Entry]] = []
    for member in members:
        e = parse_member(member, lms)
        if e is None:
            if member.lower().endswith(".ipynb"):
                result.skipped.append(
                    (member, f"name follows neither Canvas's nor Moodle's scheme ({lms})")
                )
            continue
        if not e.file.lower().endswith(".ipynb"):
            result.skipped.append((member, "not a notebook"))
            continue
        keyed.append((_student_id(e, rows, result), e))
    return keyed


def _one_notebook(
    student: str, entries: list[Entry], assignment: str, result: ImportResult
) -> Entry | None:
    """The one notebook to take for STUDENT; None, with the entries listed as skipped, when the
    folder name is unsafe, two accounts share the id, or no single notebook fits."""
    if not SAFE_ID.match(student):
        result.skipped.append(
            (entries[0].member, f"student id {student!r} cannot be a folder name")
        )
        return None
    named = [e for e in entries if _notebook_stem(e.file) == assignment]
    pick = named if named else entries
    # one id on two platforms in an "auto" zip
    if len({(e.lms, e.lms_id) for e in entries}) > 1:
        result.skipped += [
            (e.member, f"two LMS accounts map to student {student!r}") for e in entries
        ]
        return None
    if len(pick) != 1:
        result.skipped += [
            (
                e.member,
                f"{len(pick)} candidate notebooks for {student!r}; "
                f"expected one named {assignment}.ipynb",
            )
            for e in pick
        ]
        return None
    return pick[0]


def _set_time(
    e: Entry, info: zipfile.ZipInfo, student: str, zip_timezone: str, times, rostered: bool
) -> None:
    """Fill E's submission time: Moodle's from its zip member, Canvas's from ``times`` if given."""
    if e.lms == "moodle":
        from autograde.deadlines import zip_member_time

        at = zip_member_time(info, zip_timezone)
        e.submitted_at = at.isoformat() if at else ""
    # ids in their own spaces: an SIS id only for a folder the roster named
    elif times is not None:
        e.submitted_at, e.why_no_time = times.lookup(
            e.lms_id, student, rostered and student != e.lms_id
        )


def _notebook_bytes(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, e: Entry, result: ImportResult
) -> bytes | None:
    """The member's bytes; None, listed as skipped, when it is over MAX_NOTEBOOK_BYTES (as the zip
    says, or as read: the stated size is not trusted)."""
    if info.file_size > MAX_NOTEBOOK_BYTES:
        result.skipped.append(
            (e.member, f"{info.file_size} bytes, over the {MAX_NOTEBOOK_BYTES} limit")
        )
        return None
    with zf.open(info) as f:
        data = f.read(MAX_NOTEBOOK_BYTES + 1)
    if len(data) > MAX_NOTEBOOK_BYTES:
        result.skipped.append((e.member, f"over the {MAX_NOTEBOOK_BYTES}-byte limit"))
        return None
    return data


def _write_if_changed(dest: Path, data: bytes) -> None:
    """Write DATA to DEST through a temporary file, only if DEST does not hold it already."""
    if not dest.exists() or dest.read_bytes() != data:
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{dest.name}.tmp")
        tmp.write_bytes(data)
        tmp.replace(dest)


def import_zip(
    zip_path: Path,
    submissions: Path,
    assignment: str,
    lms: str = "auto",
    roster: Path | None = None,
    zip_timezone: str = "UTC",
    times=None,
) -> ImportResult:
    """Put each student's notebook from an LMS bulk download at
    SUBMISSIONS/<student>/<assignment>/<assignment>.ipynb.

    Per student, the notebook named like the assignment is taken, else the only notebook; a student
    with several other notebooks is skipped (and listed). Students are named by the LMS id, or by
    the roster's id when the roster has that id or exactly one row with that name; LMS accounts
    whose names match the same roster row are each kept under their LMS id and listed as a
    ``name_collision`` (``ImportResult.collisions``). Files are written only if they changed. Each
    Moodle entry's submission time is its zip member's time (the time of the file Moodle stored at
    upload; DOS times read in ``zip_timezone``, Moodle's server zone); Canvas's members carry the
    time the zip was made, so for Canvas only the ``_LATE`` flag is kept (autograde/deadlines.py),
    unless ``times`` (a ``canvas_times.Times``, from ``--times``) holds the student's
    ``submitted_at``.
    """
    from autograde.gradebook import read_roster

    if not SAFE_ID.match(assignment):
        raise ValueError(f"assignment id {assignment!r} cannot be a folder name")
    rows = read_roster(roster) if roster else None
    result = ImportResult()
    with zipfile.ZipFile(zip_path) as zf:
        infos = {i.filename: i for i in zf.infolist() if not i.is_dir()}
        keyed = _notebook_entries(sorted(infos), lms, rows, result)
        for student, entries in sorted(_apart(keyed, result).items()):
            e = _one_notebook(student, entries, assignment, result)
            if e is None:
                continue
            info = infos[e.member]
            _set_time(e, info, student, zip_timezone, times, rows is not None)
            data = _notebook_bytes(zf, info, e, result)
            if data is None:
                continue
            _write_if_changed(
                Path(submissions) / student / assignment / f"{assignment}.ipynb", data
            )
            result.placed[student] = e.member
            result.accounts[student] = e
            if e.late:
                result.late.append(student)
    _write_record(Path(submissions), assignment, result)
    return result


# ----------------------------------------------------------------------------------------- import
# record
def _write_record(submissions: Path, assignment: str, result: ImportResult) -> None:
    """Merge this import's accounts into the record: the feedback zips need each platform's own
    names back (Canvas: user id and attachment id; Moodle: participant id) and lms-export needs to
    know which folder names are LMS ids rather than roster ids."""
    path = record_path(submissions, assignment)
    record = read_record(submissions, assignment)
    for student, e in result.accounts.items():
        record[student] = {
            "lms": e.lms,
            "lms_id": e.lms_id,
            "name": e.name,
            "member": e.member,
            "file": e.file,
            "late": e.late,
            "submitted_at": e.submitted_at,
            "why_no_time": e.why_no_time,
        }
    write_atomic(path, dump_json(record))


# ------------------------------------------------------------------------------------------------
# export
CANVAS_FIXED = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_FIXED = ["First name", "Last name", "ID number", "Email address"]
# after the grade: map it to the assignment's feedback at import, or leave it on "Ignore"
MOODLE_LATE = "Lateness"


def final_grades(out: Path, assignment: str | None = None) -> tuple[str, list[dict]]:
    """(assignment, rows of OUT/grades.csv for it) after `export` has folded in the manual
    scores."""
    from autograde.gradebook import export

    out = Path(out)
    export(out)
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        # grades.csv wrote cell()s
        rows = [{k: uncell(v) for k, v in r.items()} for r in csv.DictReader(f)]
    found = sorted({r["assignment"] for r in rows})
    if assignment is None:
        if len(found) != 1:
            raise ValueError(
                f"{out} holds {found or 'no'} assignments: say which with --assignment"
            )
        assignment = found[0]
    if assignment not in found:
        raise ValueError(f"{out} holds no grades for {assignment!r} (it has {found})")
    return assignment, [r for r in rows if r["assignment"] == assignment]


def _logins(roster: Path) -> dict[str, str]:
    """Roster id -> the optional ``login`` column (Canvas's SIS Login ID); {} when the roster has
    none."""
    with open(roster, newline="", encoding="utf-8-sig") as f:
        reader = csv.DictReader(f)
        fields = {(h or "").strip().lower(): h for h in reader.fieldnames or []}
        if "login" not in fields or "id" not in fields:
            return {}
        # uncell: OUT/roster.csv is a harness CSV; the login is the student's text, so cell() quotes
        # it on the way out
        return {
            uncell((r[fields["id"]] or "").strip()): uncell((r[fields["login"]] or "").strip())
            for r in reader
        }


def _export_body(
    rows: list[dict], lms: str, people: dict[str, dict], logins: dict[str, str], record: dict
) -> tuple[list[list], list[str], list[str], list[str]]:
    """(body rows of the LMS's CSV, students not final, students the roster lacks, students left
    out), one row per grades.csv row as ``export_grades`` describes."""
    from autograde.deadlines import row_text

    body: list[list] = []
    pending: list[str] = []
    unmatched: list[str] = []
    left_out: list[str] = []
    for r in rows:
        sid = r["student"]
        p = people.get(sid)
        account = record.get(sid, {})
        # not final: blank (the LMS keeps what it had), listed on stdout
        final = Status.parse(r["status"]).final
        score = (r.get("final_score") or r["score"]) if final else ""  # after the late penalty
        if not final:
            pending.append(f"{sid} ({r['status']})")
        # the folder is named by the LMS's own id: no roster row matched
        from_lms = account.get("lms_id") == sid
        if p is None:
            unmatched.append(sid)
        if lms == "canvas":
            canvas_id = account.get("lms_id", "") if account.get("lms") == "canvas" else ""
            name = f"{p['last']}, {p['first']}" if p and (p["last"] or p["first"]) else sid
            sis = "" if from_lms and p is None else sid
            body.append([name, canvas_id, sis, logins.get(sid, ""), "", score])
        else:
            if from_lms and p is None and account.get("lms") == "moodle":
                left_out.append(sid)
                continue
            body.append(
                [
                    p["first"] if p else "",
                    p["last"] if p else "",
                    sid,
                    p["email"] if p else "",
                    score,
                    row_text(r),
                ]
            )
    return body, pending, unmatched, left_out


def export_grades(
    out: Path,
    dest: Path,
    lms: str,
    column: str | None = None,
    assignment: str | None = None,
    roster: Path | None = None,
    log=print,
    submissions: Path | None = None,
) -> int:
    """Write OUT's final scores of one assignment as a Canvas gradebook CSV or a Moodle grade-import
    CSV.

    Each row names its student in a column the platform matches on, and never in a column it would
    misread:
    - Canvas (canvas-lms app/models/gradebook_importer.rb, ``process_student``): the ``ID`` column
    is looked up as
      Canvas's internal user id first, then ``SIS User ID``, then ``SIS Login ID``, then the name. A
      university id of digits in ``ID`` would grade whichever Canvas user has that internal id, so
      ``ID`` holds only a Canvas user id taken from the zip ``lms-import`` read (its record under
      SUBMISSIONS/.lms/); a roster id goes to ``SIS User ID``, and the optional ``login`` column of
      a roster given as ``roster`` (OUT/roster.csv keeps only id, first, last, email) to ``SIS Login
      ID``. A ``Points Possible`` row (first field matched by /Points Possible/, ``process_pp``)
      follows the header. ``column`` is an existing assignment's header, e.g. ``Softmax (1234)``, or
      a new name.
    - Moodle (grade/import/csv, "Identify user by"): ``ID number`` holds the roster id and ``Email
    address`` the
      roster's e-mail. A folder named by a Moodle participant id (imported without a roster row) is
      not a user id Moodle can map, and an unmapped user stops Moodle's whole import
      (grade/import/csv/classes/load_data.php, ``check_user_exists`` ->
      ``cleanup_import('usermappingerror')``): such rows are left out and listed.
    Scores that are not final (written answers not yet graded, harness errors) are left blank and
    listed. The grade is the score after the late penalty (grades.csv ``final_score``;
    autograde/deadlines.py). Moodle's CSV gets a ``Lateness`` column after it (when submitted, the
    due date, how late, the penalty); Canvas's gets none, since canvas-lms makes every column it
    does not know into a new assignment (gradebook_importer.rb, ``strip_non_assignment_columns``):
    late students and their penalties are listed on stdout instead. Returns the number of student
    rows written.
    """
    from autograde.gradebook import read_roster

    if lms not in ("canvas", "moodle"):
        raise ValueError(f"unknown LMS {lms!r}: canvas or moodle")
    assignment, rows = final_grades(out, assignment)
    roster_path = roster or (Path(out) / "roster.csv")
    people = {r["id"]: r for r in read_roster(roster_path)} if Path(roster_path).exists() else {}
    logins = _logins(Path(roster_path)) if people else {}
    record = read_record(submissions, assignment)
    column = column or assignment
    body, pending, unmatched, left_out = _export_body(rows, lms, people, logins, record)
    if lms == "canvas":
        points = max((float(r["max_score"]) for r in rows), default=0.0)
        # canvas-lms reads the row whose first field matches /Points Possible/ as the columns'
        # maxima
        body.insert(0, ["Points Possible", "", "", "", "", f"{points:g}"])
    header = CANVAS_FIXED + [column] if lms == "canvas" else MOODLE_FIXED + [column, MOODLE_LATE]
    # every field through spreadsheet.cell: roster names are the students' LMS display names; RFC
    # 4180 line ends
    write_atomic(Path(dest), csv_text(header, body))
    _log_export(rows, pending, left_out, unmatched if people else [], log)
    return len(body) - (1 if lms == "canvas" else 0)


def _log_export(
    rows: list[dict], pending: list[str], left_out: list[str], unmatched: list[str], log
) -> None:
    """What an export left blank or out, and the rows to look at (late, flagged), on stdout for the
    instructor."""
    from autograde.deadlines import row_text

    # student ids are folder names, and grades.csv keeps any folder's row: shown() escapes them
    if pending:
        log(shown(f"left blank, not final yet: {', '.join(pending)}"))
    if left_out:
        log(
            shown(
                "left out, named by a Moodle participant id that Moodle's grade import cannot "
                "map (add them to "
                f"the roster and import again): {', '.join(left_out)}"
            )
        )
    if unmatched:
        log(shown(f"not in the roster (matched by id only): {', '.join(unmatched)}"))
    late = [
        f"{r['student']} ({row_text(r)})"
        for r in rows
        if float(r.get("late_penalty") or 0)
        or (r.get("lateness") or "").startswith(("late", "Canvas marked"))
    ]
    if late:
        log(shown(f"late (the grade column holds the score after the penalty): {', '.join(late)}"))
    flagged = [r["student"] for r in rows if Status.parse(r["status"]) is Status.FLAGGED]
    if flagged:
        log(
            shown(
                "exported, but flagged for a look (docs/instructors.md, statuses): "
                f"{', '.join(flagged)}"
            )
        )
