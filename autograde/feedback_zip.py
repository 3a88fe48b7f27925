"""Feedback back to students: OUT/feedback/<student>/<assignment>/<notebook>.html as the zip each
LMS takes back, named by the platform's own ids (kept by ``lms-import`` in
SUBMISSIONS/.lms/<assignment>.json), or staged for nbgrader's ``release_feedback`` when students
submitted through the nbgrader exchange.

The names follow what each platform's importer matches on (read in their source,
docs/instructors.md, "Feedback"):
- Canvas, Assignment → "Re-upload Submissions" (canvas-lms
``Assignment#generate_comments_from_files`` →
  ``infer_comment_context_from_filename``): the file's base name is split on ``_`` and the first two
  all-digit parts are the user id and the id of an attachment of that user's submission; anything
  after them is free. A file ``<lastfirst>[_LATE]_<user id>_<attachment
  id>_feedback-<notebook>.html`` becomes a submission comment with the file attached (Canvas shows
  it under the submitted file's display name);
- Moodle, "Upload multiple feedback files in a zip" (mod/assign/feedback/file/importziplib.php,
  ``is_valid_filename_for_import``): a path part split on ``_`` into at most five pieces gives the
  participant id (piece 2, numeric, a participant of this assignment) and a plugin (pieces 3 and 4);
  the rest of the path is the feedback file's name (Moodle 3.1-4.0: the whole path split into at
  most five pieces, the fifth the file). Folder ``<Full Name>_<participant
  id>_assignfeedback_file_/``, read by both, with underscores in the name made spaces as Moodle's
  own download does.
Student folders that did not come from that platform's zip have no name the platform can match: they
are listed, never guessed.
"""

from __future__ import annotations

import shutil
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from autograde.lms import CANVAS, read_record

SECRET_LIMIT = 4096  # bytes of a submission's timestamp.txt / submission_secret.txt read at most


@dataclass
class FeedbackZip:
    """What ``build`` put in the zip (zip member -> OUT page) and which students it could not
    name."""

    members: dict[str, str] = field(default_factory=dict)
    # students with feedback but no account of this LMS
    unnamed: list[str] = field(default_factory=list)


def _pages(out: Path, assignment: str) -> dict[str, list[Path]]:
    """Student -> their feedback pages of ``assignment`` in OUT (plain files only, never followed
    links)."""
    found: dict[str, list[Path]] = {}
    root = Path(out) / "feedback"
    if not root.is_dir():
        return found
    for student_dir in sorted(root.iterdir()):
        folder = student_dir / assignment
        if student_dir.is_symlink() or not folder.is_dir() or folder.is_symlink():
            continue
        pages = sorted(p for p in folder.glob("*.html") if p.is_file() and not p.is_symlink())
        if pages:
            found[student_dir.name] = pages
    return found


def _plain_name(name: str, keep: str = "") -> str:
    """A display name as letters and digits (plus ``keep``): both platforms match on the ids alone,
    and the name is the student's text (no path separators, dots or control characters reach a zip
    member name)."""
    return "".join(ch for ch in name if ch.isalnum() or ch in keep).strip()[:100] or "student"


def canvas_name(member: str, notebook: str) -> str | None:
    """The re-upload name for a feedback page, from the student's member name in Canvas's
    download."""
    m = CANVAS.match(member)
    if m is None or not m["uid"].isascii() or not m["sid"].isascii():
        return None
    return (
        f"{_plain_name(m['name'])}{m['late'] or ''}_{m['uid']}_{m['sid']}_feedback-{notebook}.html"
    )


def moodle_name(name: str, participant: str, notebook: str) -> str:
    """The upload-zip path for a feedback page of a Moodle participant."""
    # underscores become spaces as in Moodle's own download (the id is the second "_" piece); the
    # folder's trailing "_" is what Moodle 3.1-4.0 needs (explode('_', path, 5) takes piece 5 as the
    # file), >= 4.1 reads both
    folder = f"{_plain_name(name.replace('_', ' '), keep=' -')}_{participant}_assignfeedback_file_"
    return f"{folder}/{notebook}-feedback.html"


def build(out: Path, dest: Path, lms: str, submissions: Path, assignment: str) -> FeedbackZip:
    """Write DEST, a zip of OUT's feedback pages for ``assignment`` named for ``lms`` (canvas or
    moodle)."""
    if lms not in ("canvas", "moodle"):
        raise ValueError(f"unknown LMS {lms!r}: canvas or moodle")
    record = read_record(submissions, assignment)
    if not record:
        raise ValueError(
            f"no lms-import record for {assignment} under {submissions}: the feedback zip needs "
            "the "
            f"ids of the {lms} download (python -m autograde lms-import ... --to {submissions})"
        )
    result = FeedbackZip()
    for student, pages in _pages(out, assignment).items():
        account = record.get(student)
        if account is None or account.get("lms") != lms:
            result.unnamed.append(student)
            continue
        for page in pages:
            if lms == "canvas":
                name = canvas_name(account["member"], page.stem)
            # PHP is_numeric: ASCII digits
            elif account["lms_id"].isascii() and account["lms_id"].isdigit():
                name = moodle_name(account["name"], account["lms_id"], page.stem)
            else:
                name = None
            if name is None:
                result.unnamed.append(student)
                break
            result.members[name] = str(page)
    tmp = Path(dest).with_name(f".{Path(dest).name}.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, pdf in sorted(result.members.items()):
            zf.writestr(name, Path(pdf).read_bytes())
    tmp.replace(dest)
    return result


def stage_release_feedback(
    out: Path, submissions: Path, assignment: str
) -> tuple[list[str], list[str]]:
    """Copy each exchange submission's ``timestamp.txt`` and ``submission_secret.txt`` next to its
    feedback pages in OUT, which nbgrader's ``release_feedback`` needs to name the page a student's
    ``fetch_feedback`` looks for (nbgrader.exchange.default.release_feedback:
    ``notebook_hash(secret, notebook_id)``). Returns (students staged, students whose submission has
    no secret: not submitted through the exchange, so no release_feedback)."""
    staged, without = [], []
    for student in _pages(out, assignment):
        src = Path(submissions) / student / assignment
        files = {n: src / n for n in ("timestamp.txt", "submission_secret.txt")}
        if not all(
            p.is_file() and not p.is_symlink() and p.stat().st_size <= SECRET_LIMIT
            for p in files.values()
        ):
            without.append(student)
            continue
        for name, p in files.items():
            dest = Path(out) / "feedback" / student / assignment / name
            shutil.copyfile(p, dest, follow_symlinks=False)
        staged.append(student)
    return staged, without
