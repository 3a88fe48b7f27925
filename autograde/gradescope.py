"""Gradescope: an autograder bundle for one assignment, and the grading run inside Gradescope's
container.

Gradescope's autograder specification (gradescope-autograders.readthedocs.io, "Autograder
Specifications"): a zip with ``setup.sh`` (run once, as root, when the image is built) and
``run_autograder`` (run for every submission, working directory ``/autograder``) at its root; the
zip's contents appear in ``/autograder/source``, the student's files in ``/autograder/submission``,
and ``run_autograder`` must write ``/autograder/results/results.json``: a total ``score`` (or
per-test scores), optional ``output``, ``execution_time``, ``stdout_visibility``, and ``tests``,
each with ``name``, ``score``, ``max_score``, ``status``, ``output`` and ``visibility``.

``run`` grades the submission with the harness's own public entry point (``autograde.grade.grade``:
the sandboxed kernel, out-of-kernel verification, hidden-safe messages) and turns its details record
into results.json. Gradescope's containers run as root, but may not be allowed to create namespaces
(no CAP_SYS_ADMIN): the sandbox is probed first, and if it cannot run, results.json says so with
score 0 instead of running student code unsandboxed. Written answers are left to Gradescope's manual
grading.

Late work: the bundle carries the course file (``deadlines.toml``); each run reads Gradescope's
``/autograder/submission_metadata.json`` ("Submission Metadata" in the same documentation:
``created_at``, ``assignment.due_date``, ``users``) with limits (``read_metadata``: a named
``MetaStatus`` for a file that cannot be used, never an exception), grades against the course file's
due date, extension and policy (``course_deadlines``) and puts the lateness and the score after the
penalty into results.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Sequence, TypedDict

from autograde.accounts import record_path
from autograde.course import (
    REPO,
    Course,
    dump_json,
    hidden_lines,
    read_notebook,
    shown,
    write_atomic,
)
from autograde.deadlines import Deadlines, lateness_of
from autograde.deadlines import load as load_deadlines
from autograde.record import GradeRecord

STUDENT = "student"
SETUP_SH = """\
#!/usr/bin/env bash
# Gradescope runs this once, as root, while building the autograder image (apt-get update already done).
# The course's own set-up: .venv with the course and nbgrader, the model file, bubblewrap and util-linux
# (the grading sandbox). See docs/instructors.md, "Gradescope".
set -euo pipefail
apt-get install -y --no-install-recommends python3 python3-venv python3-pip bubblewrap util-linux
cd /autograder/source/repo
# torch's CPU build first: an unpinned index gives Linux the multi-GB CUDA build, and `./course setup` keeps
# a torch that is already installed
python3 -m venv .venv
.venv/bin/python -m pip install -q torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu
CI=true bash ./course setup
"""  # noqa: E501
RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Gradescope runs this for every submission. AUTOGRADER_ROOT (default /autograder) and AUTOGRADE_PYTHON
# exist so that the same script runs in a folder laid out like Gradescope's (the tests do that).
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
SRC="$ROOT/source"
PY="${AUTOGRADE_PYTHON:-$SRC/repo/.venv/bin/python}"
export PYTHONPATH="$SRC/repo${PYTHONPATH:+:$PYTHONPATH}"
exec "$PY" -m autograde.gradescope run --root "$ROOT"
"""  # noqa: E501
REPO_FILES = ("pyproject.toml", "README.md", "course")
SKIP = shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints", "tests", "bugzoo", "*.pyc")


# ------------------------------------------------------------------------------------------------
# bundle
def _rel(path: Path, root: Path, what: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(root.resolve()))
    except ValueError:
        raise ValueError(
            f"{what} {path} is outside the course root {root}: the bundle holds only the root"
        ) from None


def _add_tree(zf: zipfile.ZipFile, folder: Path, arc: str, skip=SKIP) -> None:
    for dirpath, dirnames, filenames in os.walk(folder):
        ignored = skip(dirpath, dirnames + filenames)
        dirnames[:] = sorted(d for d in dirnames if d not in ignored)
        for name in sorted(f for f in filenames if f not in ignored):
            p = Path(dirpath) / name
            zf.write(p, f"{arc}/{p.relative_to(folder)}")


def build_bundle(course: Course, assignment: str, dest: Path) -> Path:
    """Write ``dest`` (autograder.zip): setup.sh, run_autograder, course.json, the harness and this
    assignment."""
    if assignment not in course.assignments():
        raise ValueError(
            f"unknown assignment {assignment!r}; solutions/ has {course.assignments()}"
        )
    released = course.release / assignment
    if not released.is_dir():
        raise ValueError(
            f"{released} is missing: run `python -m autograde release {assignment}` first"
        )
    if course.deadlines_file.is_file():
        # a mistake in the course file stops here, not at every submission
        load_deadlines(course.deadlines_file)
    in_repo = course.root.resolve() == REPO.resolve()
    base = "repo" if in_repo else "course"
    spec = {
        "assignment": assignment,
        "root": base,
        "visible_package": course.visible_package,
        "hidden_package": course.hidden_package,
        "cell_timeout": course.cell_timeout,
        "references_dir": None
        if course.references_dir is None
        else _rel(course.references_dir, course.root, "references_dir"),
        "pythonpath": [_rel(p, course.root, "pythonpath entry") for p in course.pythonpath],
    }
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text in (("setup.sh", SETUP_SH), ("run_autograder", RUN_AUTOGRADER)):
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = 0o100755 << 16  # executable: Gradescope runs them as they are
            zf.writestr(info, text)
        zf.writestr("course.json", json.dumps(spec, indent=1, sort_keys=True) + "\n")
        # due dates, extensions, late policies: read at every run
        if course.deadlines_file.is_file():
            zf.write(course.deadlines_file, f"{base}/deadlines.toml")
        for name in REPO_FILES:
            if (REPO / name).exists():
                zf.write(REPO / name, f"repo/{name}")
        _add_tree(zf, REPO / "course_lib", "repo/course_lib")
        refs_skip = shutil.ignore_patterns("__pycache__", "tests", "bugzoo", "*.pyc", "references")
        _add_tree(zf, REPO / "autograde", "repo/autograde", skip=refs_skip)
        ref = REPO / "autograde" / "references" / f"{assignment}.json"
        if in_repo and ref.exists():
            zf.write(ref, f"repo/autograde/references/{assignment}.json")
        _add_tree(zf, course.solutions / assignment, f"{base}/solutions/{assignment}")
        _add_tree(zf, released, f"{base}/notebooks/{assignment}")
        if not in_repo:
            extra = [
                Path(p).resolve()
                for p in [
                    *course.pythonpath,
                    *([course.references_dir] if course.references_dir else []),
                ]
            ]
            for p in extra:
                # nested: already added
                if p.is_dir() and not any(q != p and q in p.parents for q in extra):
                    _add_tree(zf, Path(p), f"course/{_rel(p, course.root, 'path')}")
    tmp.replace(dest)
    return dest


# ------------------------------------------------------------------------------------ submission
# metadata
METADATA = "submission_metadata.json"
# previous_submissions repeats each earlier results.json: generous, but a cap
METADATA_BYTES = 16 << 20
MAX_USERS = 50  # a group submission lists its members; Gradescope's groups are small
MAX_FIELD = 320  # an e-mail address is at most 254 characters, a time about 32


class MetaStatus(str, Enum):
    """What reading submission_metadata.json found (a platform's file, read as data: never trusted
    to be well formed)."""

    OK = "ok"
    # no file (a local run, or Gradescope changed its layout)
    MISSING = "metadata_missing"
    TOO_LARGE = "metadata_too_large"  # over METADATA_BYTES: not read
    UNREADABLE = "metadata_unreadable"  # not UTF-8 JSON, or not a JSON object
    # a field this grader uses has the wrong type or is not a time
    MALFORMED = "metadata_malformed"


@dataclass(frozen=True)
class Metadata:
    """The fields of Gradescope's submission_metadata.json this grader uses
    (gradescope-autograders.readthedocs.io, "Submission Metadata"): ``created_at`` (the submission
    time), ``assignment.due_date`` and ``assignment.late_due_date`` (ISO 8601 with an offset; the
    late due date may be null), ``users`` (``id``, ``email``, ``name``; several for a group
    submission). Times are aware, in UTC."""

    status: MetaStatus
    detail: str = ""
    created_at: dt.datetime | None = None
    due: dt.datetime | None = None
    late_due: dt.datetime | None = None
    users: tuple[tuple[str, str, str], ...] = ()  # (id, email, name)

    def problem(self) -> str:
        """``"<status>: <detail>"``, or "" when the file was read."""
        return "" if self.status is MetaStatus.OK else f"{self.status.value}: {self.detail}"


def _time(value, where: str, optional: bool = False) -> dt.datetime | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or len(value) > MAX_FIELD:
        raise ValueError(f"{where} is not a time ({type(value).__name__})")
    try:
        t = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{where} {shown(value[:60])!r} is not an ISO 8601 time") from None
    if t.utcoffset() is None:
        raise ValueError(f"{where} {value[:60]!r} has no offset from UTC")
    return t.astimezone(dt.timezone.utc)


def _users(value) -> tuple[tuple[str, str, str], ...]:
    if not isinstance(value, list) or len(value) > MAX_USERS:
        raise ValueError(f"users is not a list of at most {MAX_USERS} users")
    users = []
    for i, u in enumerate(value):
        if not isinstance(u, dict):
            raise ValueError(f"users[{i}] is not an object")
        uid, email, name = u.get("id"), u.get("email") or "", u.get("name") or ""
        if isinstance(uid, bool) or not isinstance(uid, (int, str)) or len(str(uid)) > 40:
            raise ValueError(f"users[{i}].id is not an id")
        if (
            not isinstance(email, str)
            or not isinstance(name, str)
            or max(len(email), len(name)) > MAX_FIELD
        ):
            raise ValueError(
                f"users[{i}] has an e-mail address or name that is not text of at most {MAX_FIELD}"
            )
        users.append((str(uid), email.strip(), name))
    return tuple(users)


def read_metadata(path: Path) -> Metadata:
    """submission_metadata.json, read with a size cap and every field used checked; never raises for
    what the file holds: a file that cannot be used is a Metadata whose status names why
    (test_gradescope_lateness.py)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return Metadata(MetaStatus.MISSING, f"no {METADATA}")
    except OSError as e:
        return Metadata(MetaStatus.UNREADABLE, f"{METADATA} cannot be opened ({e.strerror})")
    try:
        with os.fdopen(fd, "rb") as f:
            raw = f.read(METADATA_BYTES + 1)
    except OSError as e:
        return Metadata(MetaStatus.UNREADABLE, f"{METADATA} cannot be read ({e.strerror})")
    if len(raw) > METADATA_BYTES:
        return Metadata(
            MetaStatus.TOO_LARGE, f"{METADATA} is over {METADATA_BYTES} bytes: not read"
        )
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return Metadata(MetaStatus.UNREADABLE, f"{METADATA} is not UTF-8 JSON")
    if not isinstance(data, dict) or not isinstance(data.get("assignment", {}), dict):
        return Metadata(
            MetaStatus.UNREADABLE, f"{METADATA} is not an object with an assignment object"
        )
    a = data.get("assignment", {})
    try:
        return Metadata(
            MetaStatus.OK,
            created_at=_time(data.get("created_at"), "created_at"),
            due=_time(a.get("due_date"), "assignment.due_date", optional=True),
            late_due=_time(a.get("late_due_date"), "assignment.late_due_date", optional=True),
            users=_users(data.get("users", [])),
        )
    except ValueError as e:
        return Metadata(MetaStatus.MALFORMED, str(e))


def course_deadlines(course: Course, assignment: str, meta: Metadata) -> tuple[Deadlines, str]:
    """(what to grade this run against, a problem to report or ""). The course file (in the bundle)
    gives the late policy (the assignment's own, else the course's), the due date where it names the
    assignment, else Gradescope's ``due_date``; an extension there applies when its key is one of
    the submission's users' e-mail address or Gradescope user id (the most generous of a group's).
    The student is STUDENT in this run."""
    try:
        term = load_deadlines(course.deadlines_file)
    except (ValueError, RuntimeError) as e:
        return Deadlines(), f"the course file cannot be read ({e}): lateness not assessed"
    due = term.due.get(assignment) or meta.due
    keys = {k.lower() for uid, email, _ in meta.users for k in (uid, email) if k}
    extension = max(
        (
            ext
            for (a, who), ext in term.extensions.items()
            if a == assignment and who.lower() in keys
        ),
        # (the course file has extensions only where it has the due date)
        default=dt.timedelta(0),
    )
    return Deadlines(
        due={assignment: due} if due else {},
        extensions={(assignment, STUDENT): extension} if extension else {},
        policy=term.policy,
        policies=term.policies,
        path=term.path or METADATA,
    ), ""


def time_record(meta: Metadata, why: str = "") -> dict:
    """The import record (autograde/accounts.py) of this run's one student:
    deadlines.submission_time reads the submission time from it, as it reads Moodle's zip time."""
    ids = ", ".join(uid for uid, _, _ in meta.users)
    return {
        STUDENT: {
            "lms": "gradescope",
            "lms_id": ids,
            "name": "",
            "member": "",
            "file": "",
            "late": False,
            "submitted_at": meta.created_at.isoformat() if meta.created_at else "",
            "why_no_time": meta.problem() or why,
        }
    }


# ------------------------------------------------------------------------------------------------
# run
def load_course(source: Path) -> tuple[Course, str]:
    """The Course and assignment described by SOURCE/course.json (inside an unpacked bundle)."""
    spec = json.loads((source / "course.json").read_text())
    root = (source / spec["root"]).resolve()
    course = Course(
        root=root,
        visible_package=spec["visible_package"],
        hidden_package=spec["hidden_package"],
        references_dir=root / spec["references_dir"] if spec["references_dir"] else None,
        pythonpath=tuple(root / p for p in spec["pythonpath"]),
        cell_timeout=spec["cell_timeout"],
    )
    return course, spec["assignment"]


def sandbox_problem(scratch: Path) -> str | None:
    """None if a sandbox can be made here (checked by running one), else why not."""
    from autograde import sandbox

    reason = sandbox.unavailable()
    if reason:
        return reason
    slot = 255  # the last slot: a probe must not share a uid with a grading job that holds slot 0
    cmd = sandbox.wrap([sys.executable, "-c", "print('ok')"], readonly=[], slot=slot)
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return "a test sandbox did not finish in 60 s"
    if res.returncode != 0 or res.stdout.strip() != "ok":
        return (
            "a test sandbox failed "
            f"({res.stderr.strip()[-300:] or f'exit status {res.returncode}'}): the "
            "container must let root create namespaces (CAP_SYS_ADMIN, or a seccomp profile "
            "allowing clone/unshare of pid, mount, ipc, uts and net namespaces) and switch users "
            "(CAP_SETUID, CAP_SETGID)"
        )
    return None


def find_notebook(submission: Path, assignment: str) -> Path | None:
    """The submitted notebook: one named <assignment>.ipynb anywhere in the submission, else the
    only notebook."""
    found = sorted(
        p
        for p in submission.rglob("*.ipynb")
        if p.is_file() and not p.is_symlink() and ".ipynb_checkpoints" not in p.parts
    )
    named = [p for p in found if p.name == f"{assignment}.ipynb"]
    if len(named) == 1:
        return named[0]
    return found[0] if len(found) == 1 else None


class ResultTest(TypedDict):
    """One entry of results.json's "tests" (Gradescope's format)."""

    name: str
    score: float
    max_score: float
    status: str
    output: str
    visibility: str


def _refusal(output: str, started: float) -> dict:
    return {
        "score": 0.0,
        "output": output,
        "execution_time": int(time.time() - started),
        "stdout_visibility": "hidden",
        "tests": [],
    }


def _scrub(text: str, secret: list[str]) -> str:
    """The text, minus any line quoting hidden test source (defence in depth: messages never
    should)."""
    return "\n".join(ln for ln in text.splitlines() if not any(s in ln for s in secret))


def results_from_record(record: dict, secret: Sequence[str] = ()) -> dict:
    """Gradescope's results.json for one graded record
    (``OUT/details/<student>/<assignment>.json``)."""
    rec = GradeRecord.from_json(record)
    tests: list[ResultTest] = []
    manual: list[str] = []
    for nb_name, nb in sorted((rec.notebooks or {}).items()):
        for t in nb["tests"]:
            if t["result"] not in ("passed", "failed"):  # an answer graded by hand
                manual.append(f"{t['grade_id']} ({t['max_points']:g} point(s))")
                continue
            passed = t["result"] == "passed"
            out = "passed" if passed else (t.get("error") or "failed")
            if t.get("outside_kernel") == "failed" and passed is False and not t.get("error"):
                out = "failed when your answers were checked again outside the notebook"
            tests.append(
                {
                    "name": f"{t['grade_id']}: {t.get('title', '')}".rstrip(": "),
                    "score": float(t["points"]),
                    "max_score": float(t["max_points"]),
                    "status": "passed" if passed else "failed",
                    "output": _scrub(out, list(secret)),
                    "visibility": "visible",
                }
            )
    lines = [f"Status: {rec.status}" + (f" ({rec.detail})" if rec.detail else "")]
    if manual:
        lines.append("Graded by hand on Gradescope: " + ", ".join(manual))
    earned = round(sum(t["score"] for t in tests), 6)
    late = lateness_of(record)
    # nbgrader's, from the course's late policy (autograde/deadlines.py)
    penalty = late.penalty or 0.0
    if late.state != "not assessed":
        lines.append(f"Deadline: {late.text()}")
    if penalty:
        lines.append(
            f"Score after the late penalty: {earned:g} - {penalty:g} = "
            f"{round(earned - penalty, 6):g} "
            "(the tests below show the points earned)"
        )
    return {
        "score": round(max(earned - penalty, 0.0), 6),
        "output": _scrub("\n".join(lines), list(secret)),
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def run(root: Path) -> dict:
    """Grade ROOT/submission with the bundle in ROOT/source; write and return
    ROOT/results/results.json."""
    started = time.time()
    root = Path(root)
    results_path = root / "results" / "results.json"
    course, assignment = load_course(root / "source")
    work = Path(tempfile.mkdtemp(prefix="autograde-gs-", dir=root))
    try:
        problem = sandbox_problem(work)
        nb = find_notebook(root / "submission", assignment)
        if problem:
            res = _refusal(
                "Not graded: this grader runs student code only inside its sandbox, and the "
                "sandbox "
                f"cannot run in this container: {problem}. Your submission is kept; tell your "
                "instructor.",
                started,
            )
        elif nb is None:
            res = _refusal(f"Not graded: no notebook found. Submit {assignment}.ipynb.", started)
        else:
            from autograde.grade import grade

            subs = work / "submitted" / STUDENT / assignment
            subs.mkdir(parents=True)
            shutil.copyfile(nb, subs / f"{assignment}.ipynb")
            # when it was submitted, Gradescope's due date, who
            meta = read_metadata(root / METADATA)
            term, why = course_deadlines(course, assignment, meta)
            unassessed = meta.problem() or why  # graded all the same; the output says why
            if unassessed:
                print(f"lateness not assessed: {unassessed}", flush=True)
            write_atomic(
                record_path(work / "submitted", assignment), dump_json(time_record(meta, why))
            )
            try:
                records = grade(
                    course,
                    work / "submitted",
                    work / "out",
                    workers=1,
                    assignments=[assignment],
                    log=lambda *a: print(*a, flush=True),
                    merge=False,
                    given_deadlines=term,
                )
            # the harness failed: say so to the student, the traceback goes to stdout
            except Exception:
                import traceback

                traceback.print_exc(file=sys.stdout)
                res = _refusal(
                    "Not graded: the grader failed (your instructor sees why in the autograder's "
                    "output). Your submission is kept.",
                    started,
                )
            else:
                secret = [
                    ln
                    for p in course.source_notebooks(assignment)
                    for ln in hidden_lines(read_notebook(p))
                ]
                res = results_from_record(records[0], secret)
                if unassessed and unassessed not in res["output"]:
                    res["output"] += f"\nLateness not assessed: {unassessed}"
                res["execution_time"] = int(time.time() - started)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write_atomic(results_path, json.dumps(res, indent=1, sort_keys=True) + "\n")
    return res


def main(argv: list[str] | None = None) -> int:
    """``python -m autograde.gradescope run --root /autograder`` (what run_autograder calls)."""
    from autograde.course import tools_beside_python

    tools_beside_python()
    p = argparse.ArgumentParser(prog="python -m autograde.gradescope")
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--root", default="/autograder")
    args = p.parse_args(argv)
    res = run(Path(args.root))
    print(f"score {res['score']:g}; results.json written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
