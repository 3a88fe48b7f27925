"""Canvas submission times from a file the instructor gives ``lms-import --times`` (issue 34).

Canvas's "Download Submissions" zip holds no submission time (its members carry the time the zip was
made: autograde/deadlines.py), and Canvas's gradebook export holds scores only. The time is the
``submitted_at`` of each Submission object of Canvas's REST API ("List assignment submissions",
``GET /api/v1/courses/:course_id/assignments/:assignment_id/submissions``; ISO 8601, e.g.
``2026-12-14T22:30:00Z``; ``null`` for a student who has not submitted), with ``user_id`` (Canvas's
user id, the one in the zip's file names) and, with ``include[]=user``, ``user.sis_user_id`` and
``user.login_id``. Two forms are read:

- that API response as saved (a JSON list of Submission objects; one file per page of results);
- a CSV with a ``submitted_at`` column and at least one of ``user_id``, ``sis_user_id``,
``login_id`` (made from that
  response, or by a script or a Canvas admin's report).

Ids are matched in their own spaces, never across: ``user_id`` against the Canvas user id in the
zip's file name, ``sis_user_id`` and ``login_id`` against the student's folder only where the roster
named that folder (a folder named by a Canvas user id is never taken for an SIS id: both are
numbers). The file is data a platform wrote: read with limits (size, rows, field length); a row that
cannot be used is named, and that student falls back to Canvas's ``_LATE`` flag with the reason in
the lateness column (test_canvas_times.py).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

# one reading of ISO 8601 times with an offset, as in the course file
from autograde.deadlines import aware

MAX_BYTES = 16 << 20
MAX_ROWS = 100_000
MAX_FIELD = 200
ID_FIELDS = ("user_id", "sis_user_id", "login_id")
SOURCE_NAME = "the Canvas times file"


@dataclass
class Times:
    """Submission times by id (ISO 8601, UTC), and ids whose rows could not be used (with why)."""

    times: dict[tuple[str, str], str] = field(default_factory=dict)  # (id field, id) -> time
    bad: dict[tuple[str, str], str] = field(default_factory=dict)  # (id field, id) -> why
    rows: int = 0

    def lookup(self, canvas_id: str, student: str, by_roster: bool) -> tuple[str, str]:
        """(the time, "") or ("", why not) for the student whose zip entry has ``canvas_id``, placed
        in the folder ``student``; ``by_roster``: the roster named that folder (so it may be an SIS
        or login id)."""
        keys = [("user_id", canvas_id)] + (
            [("sis_user_id", student), ("login_id", student)] if by_roster else []
        )
        for key in keys:
            if key in self.bad:
                return "", self.bad[key]
            if key in self.times:
                return self.times[key], ""
        return "", f"not in {SOURCE_NAME}"

    def add(self, key: tuple[str, str], value, where: str) -> None:
        if value is None or value == "":
            self.bad.setdefault(key, f"{where}: no submitted_at (not submitted on Canvas)")
            return
        try:
            if not isinstance(value, str) or len(value) > MAX_FIELD:
                raise ValueError(f"{where}: submitted_at is not a time")
            at = aware(value, where).isoformat()
        except ValueError as e:
            self.bad[key] = f"{SOURCE_NAME}: {str(e)[:300]}"
            self.times.pop(key, None)
            return
        if key in self.bad:
            return
        if self.times.get(key, at) != at:
            self.bad[key] = f"{SOURCE_NAME}: {key[0]} {key[1]} appears twice with different times"
            del self.times[key]
            return
        self.times[key] = at


def _id(value, where: str, name: str) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, bool) or not isinstance(value, (int, str)) or len(str(value)) > MAX_FIELD:
        raise ValueError(f"{where}: {name} is not an id")
    return str(value).strip()


def _from_json(data, path: Path, out: Times) -> None:
    if not isinstance(data, list):
        raise ValueError(
            f"{path}: not a list of Canvas Submission objects (the API's response is a JSON list)"
        )
    for i, sub in enumerate(data):
        where = f"{path.name}[{i}]"
        if not isinstance(sub, dict):
            raise ValueError(f"{where}: not a Submission object")
        user = given if isinstance(given := sub.get("user"), dict) else {}
        ids = [
            ("user_id", _id(sub.get("user_id"), where, "user_id")),
            ("sis_user_id", _id(user.get("sis_user_id"), where, "user.sis_user_id")),
            ("login_id", _id(user.get("login_id"), where, "user.login_id")),
        ]
        if not any(v for _, v in ids):
            raise ValueError(f"{where}: no user_id")
        for key in ids:
            if key[1]:
                out.add(key, sub.get("submitted_at"), where)


def _from_csv(text: str, path: Path, out: Times) -> None:
    reader = csv.DictReader(io.StringIO(text))
    header = {(h or "").strip().lower(): h for h in reader.fieldnames or []}
    ids = [f for f in ID_FIELDS if f in header]
    if "submitted_at" not in header or not ids:
        raise ValueError(
            f"{path}: a times CSV has the columns submitted_at and one of {', '.join(ID_FIELDS)}; "
            f"it has {(', '.join(header) or 'none')[:200]}"
        )
    for n, row in enumerate(reader, start=2):
        where = f"{path.name}, line {n}"
        for f in ids:
            value = _id((row.get(header[f]) or "").strip(), where, f)
            if value:
                out.add((f, value), (row.get(header["submitted_at"]) or "").strip(), where)


def read_times(paths: list[Path]) -> Times:
    """Every file's times in one Times; ValueError naming the file for a file that is not one (too
    large, not JSON or CSV of the expected shape). Rows that cannot be used are kept as
    ``Times.bad``."""
    out = Times()
    for path in map(Path, paths):
        with open(path, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            raise ValueError(f"{path}: over {MAX_BYTES} bytes: not a Canvas times file")
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ValueError(f"{path}: not UTF-8 text") from None
        if text.lstrip()[:1] in ("[", "{"):
            try:
                data = json.loads(text)
            except (ValueError, RecursionError):
                raise ValueError(f"{path}: not JSON") from None
            _from_json(data, path, out)
        else:
            _from_csv(text, path, out)
        out.rows = len(out.times) + len(out.bad)
        if out.rows > MAX_ROWS:
            raise ValueError(f"{path}: over {MAX_ROWS} ids: not one course's times")
    return out
