"""Deadlines and late work: the course file ``deadlines.toml``, when each submission was made, how
late it is and what the late policy takes off (issue 34, part 1).

- The course file (``<course root>/deadlines.toml``; docs/instructors.md, "Deadlines and late work")
holds a due
  date per assignment (ISO 8601 with an offset: ``2026-12-14T23:59:00+01:00``), per-student
  extensions, the course's late policy and its grace period, an assignment's own policy where it has
  one (``Deadlines.policy_for``), and the time zone of Moodle's zip member times.
- When: ``submission_time`` takes the platform's own time where an import record holds one, and
  then never one the student wrote. In order: the record
  ``lms-import`` kept (Moodle: the zip member's time; Canvas: ``submitted_at`` from ``--times``,
  autograde/canvas_times.py, else its ``_LATE`` flag only, since Canvas's zip members carry the time
  the zip was made; Gradescope: ``created_at`` of submission_metadata.json,
  autograde/gradescope.py), else nbgrader's exchange (``timestamp.txt`` as ``nbgrader collect``
  placed it), else the notebook file's modification time (last resort, named as such). A student's
  folder that ``lms-import`` filled never has its ``timestamp.txt`` read (test_deadlines.py,
  test_forged_timestamp_*). Without a record the time is only as good as the collection: nbgrader's
  default exchange stamps ``timestamp.txt`` in the student's own ``nbgrader submit``, and a folder
  handed in any other way holds whatever ``timestamp.txt`` and file times the student gave it
  (white-box red team 25, E8: a forged ``timestamp.txt`` turned 2 days late into on time;
  docs/threat-model.md, docs/NEXT.md).
- How late, and the penalty: ``assess`` (the due date plus the student's extension, the grace
period), ``Policy``.
- nbgrader keeps it: the grader writes ``timestamp.txt`` (nbgrader's own format) into the throwaway
course of the
  trusted pass and sets the assignment's ``duedate`` and the submission's ``extension`` in its
  gradebook; nbgrader's ``AssignLatePenalties`` then calls ``LatePolicy`` (a
  ``nbgrader.plugins.LateSubmissionPlugin``), which stores the penalty per notebook
  (``SubmittedNotebook.late_submission_penalty``).

Everything here is trusted code; the only student-side inputs are file names and bytes, read with
limits.
"""

from __future__ import annotations

import datetime as dt
import html
import math
import os
import stat
import struct
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from nbformat.v4 import new_markdown_cell
from nbgrader.plugins import LateSubmissionPlugin
from nbgrader.preprocessors import GetGrades, NbGraderPreprocessor
from traitlets import Dict, Enum, Float

UTC = dt.timezone.utc
FILE = "deadlines.toml"
TIMESTAMP_BYTES = 200  # nbgrader's timestamp.txt is one line of ~35 characters
METHODS = ("none", "zero", "percent")
UNITS = {"day": 86400, "hour": 3600}

# where a submission time came from (the ``time_source`` column)
MOODLE_ZIP = "moodle zip"
CANVAS_FLAG = "canvas _LATE flag"
# lms-import --times: Canvas's API submitted_at (autograde/canvas_times.py)
CANVAS_TIMES = "canvas submitted_at"
# submission_metadata.json's submission time (autograde/gradescope.py)
GRADESCOPE = "gradescope created_at"
EXCHANGE = "nbgrader exchange"
FILE_TIME = "file time"


# ------------------------------------------------------------------------------------------- the
# policy
@dataclass(frozen=True)
class Policy:
    """What lateness costs, as a share of the score the submission earned (nbgrader's plugin is
    given the score).

    ``method``: "none" (lateness shown, nothing taken), "zero" (a late submission scores 0),
    "percent" (``percent`` % of the score per started ``per`` ("day" or "hour") late, at most
    ``cap`` %). ``grace_minutes``: lateness up to this counts as on time; past it, lateness counts
    from the due date itself.
    """

    method: str = "none"
    percent: float = 0.0
    per: str = "day"
    cap: float = 100.0
    grace_minutes: float = 0.0

    def __post_init__(self):
        if self.method not in METHODS:
            raise ValueError(f"late_policy.method {self.method!r}: one of {', '.join(METHODS)}")
        if self.per not in UNITS:
            raise ValueError(f"late_policy.per {self.per!r}: one of {', '.join(UNITS)}")
        for name in ("percent", "cap", "grace_minutes"):
            value = getattr(self, name)
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not math.isfinite(value)
                or value < 0
            ):
                raise ValueError(f"late_policy.{name} must be a number >= 0, not {value!r}")
        if self.cap > 100:
            raise ValueError(f"late_policy.cap is a percentage: at most 100, not {self.cap!r}")

    def late(self, seconds_late: float) -> bool:
        """Late past the grace period."""
        return seconds_late > self.grace_minutes * 60

    def fraction(self, seconds_late: float) -> float:
        """The share of the score taken for ``seconds_late`` (0 on time or within the grace
        period)."""
        if not self.late(seconds_late) or self.method == "none":
            return 0.0
        if self.method == "zero":
            return 1.0
        units = math.ceil(seconds_late / UNITS[self.per])  # a started day (hour) counts whole
        return min(self.percent * units, self.cap) / 100.0

    def penalty(self, score: float, seconds_late: float) -> float:
        """Points taken from ``score``."""
        return round(max(score, 0.0) * self.fraction(seconds_late), 6)

    def describe(self) -> str:
        grace = f", {self.grace_minutes:g} min grace" if self.grace_minutes else ""
        if self.method == "none":
            return f"no late penalty{grace}"
        if self.method == "zero":
            return f"late work scores 0{grace}"
        return (
            f"{self.percent:g} % of the score per started {self.per} late, at most "
            f"{self.cap:g} %{grace}"
        )


class LatePolicy(LateSubmissionPlugin):
    """nbgrader's late-submission plugin, configured from the course file (worker.config sets its
    traits).

    nbgrader's ``AssignLatePenalties`` calls it once per notebook with the notebook's score and the
    submission's ``total_seconds_late`` (timestamp minus due date plus extension) when that is above
    0, and stores what it returns as the notebook's ``late_submission_penalty``."""

    penalty_method = Enum(METHODS, default_value="none", help="none | zero | percent").tag(
        config=True
    )
    percent = Float(0.0, help="percent of the score per started unit late (method 'percent')").tag(
        config=True
    )
    per = Enum(tuple(UNITS), default_value="day", help="the unit: day or hour").tag(config=True)
    cap = Float(100.0, help="at most this percent of the score").tag(config=True)
    grace_minutes = Float(0.0, help="lateness up to this counts as on time").tag(config=True)

    def policy(self) -> Policy:
        return Policy(self.penalty_method, self.percent, self.per, self.cap, self.grace_minutes)

    def late_submission_penalty(
        self, student_id: str, score: float, total_seconds_late: float
    ) -> float | None:
        policy = self.policy()
        if not policy.late(total_seconds_late):
            return None  # within the grace period: no penalty
        return policy.penalty(float(score or 0.0), float(total_seconds_late))


def plugin_config(c, policy: Policy) -> None:
    """Put ``LatePolicy`` with ``policy`` into an nbgrader Config (the trusted pass's)."""
    c.AssignLatePenalties.plugin_class = LatePolicy
    c.LatePolicy.penalty_method = policy.method
    c.LatePolicy.percent = float(policy.percent)
    c.LatePolicy.per = policy.per
    c.LatePolicy.cap = float(policy.cap)
    c.LatePolicy.grace_minutes = float(policy.grace_minutes)


# -------------------------------------------------------------------------------------------- the
# file
@dataclass(frozen=True)
class Deadlines:
    """The course file, read: due dates (aware, UTC), extensions, the policy, Moodle's zip time
    zone."""

    due: dict[str, dt.datetime] = field(default_factory=dict)
    # (assignment, student)
    extensions: dict[tuple[str, str], dt.timedelta] = field(default_factory=dict)
    policy: Policy = Policy()  # the course's default
    zip_timezone: str = "UTC"
    path: str = ""  # where it was read from ("" when there is no file)
    # an assignment's own policy, where it has one
    policies: dict[str, Policy] = field(default_factory=dict)

    def policy_for(self, assignment: str) -> Policy:
        """The late policy of ``assignment``: its own ``[assignments.<id>.late_policy]``, else the
        course's."""
        return self.policies.get(assignment, self.policy)

    def fingerprint(self) -> str:
        return repr(
            (
                sorted(self.due.items()),
                sorted(self.extensions.items()),
                self.policy,
                self.zip_timezone,
                sorted(self.policies.items()),
            )
        )


def aware(value, where: str) -> dt.datetime:
    """A TOML offset date-time, or an ISO 8601 string with an offset, as an aware UTC datetime."""
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"{where}: {value!r} is not an ISO 8601 date and time") from None
    if not isinstance(value, dt.datetime):
        raise ValueError(
            f"{where}: a date and time with an offset, e.g. 2026-12-14T23:59:00+01:00, not "
            f"{value!r}"
        )
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(
            f"{where}: {value.isoformat()} has no offset from UTC: write it as "
            f"{value.isoformat()}+01:00 (or Z for UTC)"
        )
    return value.astimezone(UTC)


def _extension(value, due: dt.datetime, where: str) -> dt.timedelta:
    """``{days = 2, hours = 6}`` (nbgrader's grant_extension units), or the student's own due
    date."""
    if isinstance(value, dict):
        unknown = sorted(set(value) - {"weeks", "days", "hours", "minutes"})
        if unknown or not value:
            raise ValueError(
                f"{where}: an extension is {{ days = N, hours = N, minutes = N, weeks = N }} "
                f"or a date and time; got {value!r}"
            )
        for k, v in value.items():
            if (
                isinstance(v, bool)
                or not isinstance(v, (int, float))
                or not math.isfinite(v)
                or v < 0
            ):
                raise ValueError(f"{where}.{k}: a number >= 0, not {v!r}")
        return dt.timedelta(**{k: float(v) for k, v in value.items()})
    later = aware(value, where)
    if later < due:
        raise ValueError(
            f"{where}: {later.isoformat()} is before the assignment's due date {due.isoformat()}"
        )
    return later - due


POLICY_KEYS = ("method", "percent", "per", "cap", "grace_minutes")


def _policy(table, where: str, base: dict | None = None) -> Policy:
    """A ``late_policy`` table as a Policy; ``base``: the course default's fields, which an
    assignment's own table changes key by key (an assignment's ``method = "zero"`` keeps the
    course's grace period)."""
    if not isinstance(table, dict):
        raise ValueError(f"{where} is a table of {', '.join(POLICY_KEYS)}, not {table!r}")
    if unknown := sorted(set(table) - set(POLICY_KEYS)):
        raise ValueError(
            f"{where} has unknown key(s) {', '.join(unknown)} (known: {', '.join(POLICY_KEYS)})"
        )
    try:
        return Policy(**{**(base or {}), **table})
    except (TypeError, ValueError) as e:
        raise ValueError(f"{where}: {e}") from None


def parse(data: dict, path: str = FILE) -> Deadlines:
    """The course file's contents (a dict from tomllib) as Deadlines; ValueError naming the place of
    a mistake."""
    known = {"assignments", "late_policy", "moodle_zip_timezone"}
    if unknown := sorted(set(data) - known):
        raise ValueError(
            f"{path}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})"
        )
    policy = _policy(data.get("late_policy", {}), f"{path}: [late_policy]")
    zone = data.get("moodle_zip_timezone", "UTC")
    _zone(zone, path)
    due, extensions, policies = {}, {}, {}
    assignments = data.get("assignments") or {}
    if not isinstance(assignments, dict):
        raise ValueError(
            f"{path}: assignments is a table of [assignments.<id>], not {assignments!r}"
        )
    for a, spec in assignments.items():
        where = f"{path}: [assignments.{a}]"
        if not isinstance(spec, dict) or "due" not in spec:
            raise ValueError(f"{where} needs due = <date and time with offset>")
        if unknown := sorted(set(spec) - {"due", "extensions", "late_policy"}):
            raise ValueError(
                f"{where} has unknown key(s) {', '.join(unknown)} (known: due, extensions, "
                "late_policy)"
            )
        due[a] = aware(spec["due"], f"{where} due")
        if "late_policy" in spec:
            policies[a] = _policy(
                spec["late_policy"], f"{path}: [assignments.{a}.late_policy]", asdict(policy)
            )
        exts = spec.get("extensions") or {}
        if not isinstance(exts, dict):
            raise ValueError(
                f"{where} extensions is a table of <student> = <extension>, not {exts!r}"
            )
        for student, ext in exts.items():
            extensions[(a, str(student))] = _extension(ext, due[a], f"{where} extensions.{student}")
    return Deadlines(due, extensions, policy, zone, path, policies)


def _zone(name: str, where: str) -> dt.tzinfo:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if name == "UTC":
        return UTC
    try:
        return ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"{where}: moodle_zip_timezone {name!r} is not a time zone name (e.g. Europe/Berlin)"
        ) from None


def load(path: Path) -> Deadlines:
    """Read the course file at ``path``; no file: no due dates (every row says so, nothing is
    taken)."""
    path = Path(path)
    if not path.exists():
        return Deadlines()
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        raise RuntimeError(
            f"{path}: reading the course file needs Python >= 3.11 (tomllib)"
        ) from None
    with open(path, "rb") as f:
        try:
            data = tomllib.load(f)
        except tomllib.TOMLDecodeError as e:
            raise ValueError(f"{path}: {e}") from None
    return parse(data, str(path))


# ------------------------------------------------------------------------------------------ when
@dataclass(frozen=True)
class When:
    """A submission's time as the platform (or the exchange, or the file system) gives it."""

    at: dt.datetime | None  # aware UTC; None: the source gives no time
    # MOODLE_ZIP, CANVAS_FLAG, EXCHANGE, FILE_TIME, or "" (nothing submitted)
    source: str
    platform_late: bool | None = None  # Canvas's _LATE flag (None: no such verdict)
    note: str = ""


def zip_member_time(info: zipfile.ZipInfo, zone: str = "UTC") -> dt.datetime | None:
    """A zip member's modification time, aware: the extended-timestamp extra field (0x5455, Unix
    seconds, UTC) where the zip has one, else the DOS date and time, read in ``zone`` (the time zone
    of the machine that made it: the DOS field holds local time without a zone); None if neither is
    a time (a damaged zip)."""
    extra, i = info.extra or b"", 0
    while i + 4 <= len(extra):
        tag, size = struct.unpack_from("<HH", extra, i)
        body = extra[i + 4 : i + 4 + size]
        if tag == 0x5455 and len(body) >= 5 and body[0] & 1:
            return dt.datetime.fromtimestamp(struct.unpack_from("<I", body, 1)[0], UTC)
        i += 4 + size
    try:
        return dt.datetime(*info.date_time, tzinfo=_zone(zone, "zip")).astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def _read_small(path: Path, limit: int) -> bytes | None:
    """A regular file's first ``limit`` bytes, never through a link; None if it is not one."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, limit)
    finally:
        os.close(fd)


def exchange_time(folder: Path) -> tuple[dt.datetime | None, str]:
    """nbgrader's ``timestamp.txt`` in a collected submission, parsed as nbgrader parses it
    (nbgrader.utils.parse_utc: ``2026-12-07 11:49:01.123456 UTC``, the exchange's default format, or
    any ISO 8601); (None, why) otherwise."""
    from nbgrader.utils import parse_utc

    raw = _read_small(Path(folder) / "timestamp.txt", TIMESTAMP_BYTES + 1)
    if raw is None:
        return None, ""
    if len(raw) > TIMESTAMP_BYTES:
        return None, "timestamp.txt is too long to be nbgrader's: not read"
    try:
        naive = parse_utc(raw.decode("ascii").strip())  # naive UTC, as nbgrader stores it
        return naive.replace(tzinfo=UTC), ""
    except (ValueError, OverflowError, TypeError, UnicodeDecodeError):
        return None, "timestamp.txt is not a time nbgrader can read: not used"


def submission_time(
    submissions: Path, student: str, assignment: str, record: dict | None = None
) -> When:
    """When ``student`` submitted ``assignment`` (see the module docstring for the order of
    sources)."""
    from autograde.accounts import read_record

    record = read_record(submissions, assignment) if record is None else record
    account = record.get(student)
    if account:  # the platform's own word; a timestamp.txt in this folder is not (threat-model.md)
        timed = {"moodle": MOODLE_ZIP, "gradescope": GRADESCOPE, "canvas": CANVAS_TIMES}.get(
            account.get("lms", "")
        )
        if timed and account.get("submitted_at"):
            return When(aware(account["submitted_at"], "import record"), timed)
        if account.get("lms") == "canvas":
            return When(
                None,
                CANVAS_FLAG,
                platform_late=bool(account.get("late")),
                note=account.get("why_no_time", ""),
            )
        return When(
            None,
            "",
            note=account.get("why_no_time")
            or f"the {account.get('lms')} import record holds no time",
        )
    folder = Path(submissions) / student / assignment
    # never followed (grade refuses such folders too)
    if os.path.islink(folder) or os.path.islink(folder.parent):
        return When(None, "", note="the student's folder is a link")
    at, why = exchange_time(folder)
    if at is not None:
        return When(at, EXCHANGE)
    try:
        notebooks = sorted(
            p for p in folder.iterdir() if p.name.endswith(".ipynb") and not p.is_symlink()
        )
    except OSError:
        notebooks = []
    named = [p for p in notebooks if p.name == f"{assignment}.ipynb"] or notebooks
    if not named:
        return When(None, "", note=why)
    mtime = max(p.lstat().st_mtime for p in named)
    return When(dt.datetime.fromtimestamp(mtime, UTC), FILE_TIME, note=why)


# ------------------------------------------------------------------------------------------ how
# late
def _span(seconds: float) -> str:
    """``93784`` -> ``1 d 2 h 3 min`` (whole minutes, rounded up: 1 s late reads "1 min")."""
    minutes = math.ceil(seconds / 60)
    d, rest = divmod(minutes, 1440)
    h, m = divmod(rest, 60)
    return " ".join(f"{n} {u}" for n, u in ((d, "d"), (h, "h"), (m, "min")) if n) or "0 min"


def _utc(t: dt.datetime | None) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC") if t else ""


@dataclass
class Lateness:
    """One submission against its deadline: what grades.csv, the feedback page and the exports
    show."""

    due: str = ""  # ISO 8601 UTC, with the student's extension ("" : no due date)
    extension_s: float = 0.0
    submitted: str = ""  # ISO 8601 UTC ("" : no time)
    source: str = ""
    seconds_late: float | None = None  # None: unknown (no due date, no time)
    late: bool = False  # past the grace period (or Canvas says so)
    # the lateness column: on time | within grace | late ... | no due date | ...
    state: str = "no due date"
    policy: dict = field(default_factory=dict)
    # points (None: not applied: on time, no due date or not computable)
    penalty: float | None = None

    def key(self) -> bytes:
        """What a grade and its page depend on, for the grading fingerprint: the policy only where
        it is applied, so a new policy regrades the late students, not the class."""
        return repr(
            (
                self.due,
                self.submitted,
                self.source,
                self.seconds_late,
                self.late,
                self.state,
                self.policy if self.late else None,
            )
        ).encode()

    def policy_used(self) -> Policy:
        return Policy(**self.policy) if self.policy else Policy()

    def penalty_for(self, score: float) -> float | None:
        """Points the policy takes from ``score`` (None where nothing is applied)."""
        if not self.late or self.seconds_late is None:
            return None
        return self.policy_used().penalty(score, self.seconds_late)

    def text(self, with_penalty: bool = True) -> str:
        """One line for a person (feedback page, exports); the page adds the penalty nbgrader stored
        itself."""
        parts = []
        if self.submitted:
            parts.append(
                f"submitted {_utc(dt.datetime.fromisoformat(self.submitted))} ({self.source})"
            )
        if self.due:
            ext = f", with an extension of {_span(self.extension_s)}" if self.extension_s else ""
            parts.append(f"due {_utc(dt.datetime.fromisoformat(self.due))}{ext}")
        parts.append(self.state)
        if self.late and self.seconds_late is not None:
            parts.append(f"late policy: {self.policy_used().describe()}")
        if with_penalty and self.penalty:
            parts.append(f"late penalty {self.penalty:g} point(s)")
        return "; ".join(parts)


def assess(deadlines: Deadlines, assignment: str, student: str, when: When) -> Lateness:
    """How late ``when`` is against ``assignment``'s due date plus ``student``'s extension, under
    the assignment's late policy."""
    policy = deadlines.policy_for(assignment)
    out = Lateness(
        policy=asdict(policy), source=when.source, submitted=when.at.isoformat() if when.at else ""
    )
    due = deadlines.due.get(assignment)
    if due is None:
        out.state = (
            f"no due date for {assignment} in {Path(deadlines.path).name}"
            if deadlines.path
            else f"no due date (no {FILE})"
        )
        if when.platform_late:
            out.state += "; Canvas marked it late"
        return out
    ext = deadlines.extensions.get((assignment, student), dt.timedelta(0))
    out.due, out.extension_s = (due + ext).isoformat(), ext.total_seconds()
    if when.at is None:
        if when.source == CANVAS_FLAG and when.platform_late:
            # Canvas's zip holds no submission time (its members carry the time the zip was made):
            # its flag is the verdict, against Canvas's own due date; how late is unknown, so no
            # penalty is computed
            out.late = True
            out.state = (
                "late by Canvas's _LATE flag (Canvas's zip holds no submission time: no penalty "
                "applied, set one by hand)"
            )
            if ext:
                out.late = False
                out.state = (
                    "Canvas marked it late against Canvas's due date, but the course file gives an "
                    "extension and the zip holds no time: check by hand; no penalty applied"
                )
        elif when.source == CANVAS_FLAG:
            out.state, out.seconds_late = "on time (Canvas: no _LATE flag)", 0.0
        else:
            out.state = "no submission time"
        # why there is no time (lms-import --times without this student, Gradescope's metadata)
        if when.note:
            out.state += f" ({when.note})"
        return out
    seconds = max(0.0, (when.at - (due + ext)).total_seconds())
    out.seconds_late = round(seconds, 3)
    out.late = policy.late(seconds)
    out.state = (
        "on time"
        if seconds == 0
        else f"within the {policy.grace_minutes:g} min grace period "
        f"({_span(seconds)} after the due date)"
        if not out.late
        else f"late by {_span(seconds)}"
    )
    if when.note:
        out.state += f" ({when.note})"
    return out


def assess_job(deadlines: Deadlines, submissions: Path, student: str, assignment: str) -> Lateness:
    return assess(deadlines, assignment, student, submission_time(submissions, student, assignment))


# ------------------------------------------------------------------- into nbgrader's course, back
# out
def nbgrader_timestamp(iso: str) -> str:
    """An aware time in nbgrader's exchange format (``%Y-%m-%d %H:%M:%S.%f %Z`` in UTC), which
    nbgrader's ``CourseDirectory.get_existing_timestamp`` reads."""
    return dt.datetime.fromisoformat(iso).astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC")


def into_course(course_dir: Path, assignment: str, student: str, late: Lateness) -> None:
    """The trusted pass's course: ``timestamp.txt`` beside the submission (written here, from the
    platform's time), the assignment's due date and the student's extension in its gradebook.
    nbgrader's autograde then records the timestamp, and ``AssignLatePenalties`` asks ``LatePolicy``
    for the penalty."""
    from nbgrader.api import Gradebook

    if late.submitted:
        (Path(course_dir) / "submitted" / student / assignment / "timestamp.txt").write_text(
            nbgrader_timestamp(late.submitted)
        )
    if not late.due:
        return
    base = dt.datetime.fromisoformat(late.due) - dt.timedelta(seconds=late.extension_s)
    import warnings

    # nbgrader's update_or_create_submission trips SQLAlchemy autoflush warnings that do not affect
    # the result
    with (
        warnings.catch_warnings(),
        Gradebook(f"sqlite:///{Path(course_dir) / 'gradebook.db'}") as gb,
    ):
        warnings.simplefilter("ignore", category=Warning)
        gb.update_or_create_assignment(
            assignment, duedate=base.astimezone(UTC).replace(tzinfo=None)
        )
        gb.update_or_create_student(student)
        sub = gb.update_or_create_submission(assignment, student)
        sub.extension = dt.timedelta(seconds=late.extension_s) if late.extension_s else None
        gb.db.commit()


def from_gradebook(db: Path, assignment: str, student: str) -> tuple[float | None, float]:
    """(nbgrader's total_seconds_late or None without a timestamp, the sum of its notebooks' late
    penalties)."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(f"sqlite:///{db}") as gb:
        try:
            sub = gb.find_submission(assignment, student)
        except MissingEntry:
            return None, 0.0
        seconds = sub.total_seconds_late if sub.timestamp is not None else None
        return seconds, float(sum(nb.late_submission_penalty or 0.0 for nb in sub.notebooks))


def settle(record: dict, late: Lateness, out: Path) -> None:
    """Put the lateness and nbgrader's penalty (from the student's gradebook) into a details
    record."""
    db = Path(out) / "gradebooks" / record["student"] / f"{record['assignment']}.db"
    if db.exists() and late.late and late.seconds_late is not None:
        _, late.penalty = from_gradebook(db, record["assignment"], record["student"])
    record["late"] = asdict(late)


def copy_into(src, main, assignment: str, student: str) -> None:
    """A student's timestamp, extension and per-notebook late penalties, and the assignment's due
    date, from the student's own gradebook submission ``src`` into OUT/gradebook.db (``main``):
    formgrader and ``nbgrader export`` show them there."""
    tgt = main.find_submission(assignment, student)
    tgt.timestamp, tgt.extension = src.timestamp, src.extension
    main.find_assignment(assignment).duedate = src.assignment.duedate
    for nb in src.notebooks:
        main.find_submission_notebook(
            nb.name, assignment, student
        ).late_submission_penalty = nb.late_submission_penalty


def lateness_of(record: dict) -> Lateness:
    """The Lateness a details record holds (records graded before deadlines existed: none)."""
    return (
        Lateness(**record["late"])
        if isinstance(record.get("late"), dict)
        else Lateness(state="not assessed")
    )


def refresh_penalty(record: dict, gb=None) -> None:
    """After manual marks: the penalty again from the final score, in the record and in
    OUT/gradebook.db (``gb``, per notebook, as nbgrader keeps it), so formgrader, the feedback pages
    and the exports agree."""
    late = lateness_of(record)
    if not late.late or late.seconds_late is None:
        return
    policy = late.policy_used()
    if gb is not None:
        from nbgrader.api import MissingEntry

        try:
            sub = gb.find_submission(record["assignment"], record["student"])
        except MissingEntry:
            sub = None
        if sub is not None:
            total = 0.0
            for nb in sub.notebooks:
                p = policy.penalty(float(nb.score or 0.0), late.seconds_late)
                nb.late_submission_penalty = p or None
                total += p
            gb.db.commit()
            late.penalty = round(total, 6)
            record["late"] = asdict(late)
            return
    late.penalty = late.penalty_for(float(record["score"]))
    record["late"] = asdict(late)


# ------------------------------------------------------------------------------------------
# grades.csv
CSV_FIELDS = [
    "submitted",
    "time_source",
    "due",
    "seconds_late",
    "lateness",
    "late_penalty",
    "final_score",
]


def csv_fields(record: dict) -> list[str]:
    """The late columns of a grades.csv row (after the existing ones, whose meaning is
    unchanged)."""
    late = lateness_of(record)
    penalty = late.penalty or 0.0
    return [
        _utc(dt.datetime.fromisoformat(late.submitted)) if late.submitted else "",
        late.source,
        _utc(dt.datetime.fromisoformat(late.due)) if late.due else "",
        "" if late.seconds_late is None else f"{late.seconds_late:g}",
        late.state,
        f"{penalty:g}",
        f"{round(float(record['score']) - penalty, 6):g}",
    ]


def row_text(row: dict) -> str:
    """The late columns of a grades.csv row as one line (the Moodle export's Lateness column,
    logs)."""
    parts = [row.get("lateness") or "not assessed"]
    if row.get("submitted"):
        parts.append(f"submitted {row['submitted']} ({row.get('time_source', '')})")
    if row.get("due"):
        parts.append(f"due {row['due']}")
    if float(row.get("late_penalty") or 0):
        parts.append(f"late penalty {row['late_penalty']} point(s)")
    return "; ".join(parts)


# ------------------------------------------------------------------------------------------
# feedback page
def notes(out: Path) -> dict[str, str]:
    """'<student>/<assignment>' -> the lateness line of each details record in OUT (for the feedback
    pages)."""
    import json

    found = {}
    for p in sorted((Path(out) / "details").glob("*/*.json")):
        try:
            r = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(r.get("late"), dict):
            found[f"{r['student']}/{r['assignment']}"] = lateness_of(r).text(with_penalty=False)
    return found


class LateNote(NbGraderPreprocessor):
    """A first cell on each feedback page: when the work was submitted, its due date, how late, and
    the penalty nbgrader stored (``GetGrades`` put it in the resources: this step runs after it).
    The text is the harness's own (times, numbers, fixed words), escaped for markdown all the
    same."""

    notes = Dict({}, help="'<student>/<assignment>' -> the lateness line (deadlines.notes)").tag(
        config=True
    )

    def preprocess(self, nb, resources):
        info = resources.get("nbgrader", {})
        line = self.notes.get(f"{info.get('student')}/{info.get('assignment')}")
        if line is None:
            return nb, resources
        penalty = float(info.get("late_penalty") or 0.0)
        if penalty:
            line += f"; late penalty {penalty:g} point(s), already taken off the score shown"
        text = html.escape(line).replace("_", "\\_").replace("*", "\\*")
        nb.cells.insert(
            0,
            new_markdown_cell(f"**Deadline:** {text}", metadata={"autograde": {"late_note": True}}),
        )
        return nb, resources


def feedback_notes(c, found: dict[str, str]) -> None:
    """LateNote after GetGrades in a feedback Config (autograde.worker.feedback_config made the
    list)."""
    steps = list(c.GenerateFeedback.preprocessors)
    if LateNote not in steps:
        steps.insert(steps.index(GetGrades) + 1, LateNote)
    c.GenerateFeedback.preprocessors = steps
    c.LateNote.notes = found
