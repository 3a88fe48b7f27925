"""Intake of one submitted notebook: parse, rebuild, scan and identify it in a child process with limits.

A submission is hostile input even before any of it runs: JSON nested 100,000 deep, a 4 MB cell that makes
the similarity matching quadratic, or source that makes the static scan's parser take gigabytes. So the
grader never parses it itself. ``intake(...)`` runs ``python -m autograde.intake`` under an address-space and
CPU limit and a wall-clock deadline, and reads back one framed message through autograde.boundary: either the
rebuilt notebook (autograde.sanitize) with its repair notes and the static scan's flags, or a status with a
detail: ``invalid_notebook`` (not a notebook, too large, too deep, unparseable) or ``wrong_assignment`` (it is
recognisably another assignment's notebook).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from autograde import boundary

MEMORY_BYTES = 2 << 30
CPU_SECONDS = 60
WALL_SECONDS = 120
MESSAGE_LIMIT = boundary.FRAME_CAP
# the course's notebooks have < 150 cells and < 200 KB of source: a submission far past that is not an answer,
# and the grading of its text (matching, nbgrader, feedback) would cost minutes
MAX_CELLS = 1000
MAX_CELL_CHARS = 256_000
MAX_SOURCE_CHARS = 4_000_000


@dataclass
class Intake:
    """What the grader learns about one submitted notebook before running anything of it."""

    status: str  # "ok", "invalid_notebook" or "wrong_assignment"
    detail: str = ""
    notebook: str = ""  # the rebuilt notebook (nbformat JSON text) when status is "ok"
    notes: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    rule_failures: dict[str, list[str]] = field(default_factory=dict)  # check name -> forbidden uses found


def _norm(src: str) -> str:
    return "\n".join(line.rstrip() for line in src.strip().splitlines())


def fingerprints(release_text: str) -> dict:
    """What identifies an assignment's notebook: its grade ids and hashes of its locked cells' text."""
    import nbformat
    nb = nbformat.reads(release_text, as_version=4)
    ids, texts = [], []
    for c in nb.cells:
        meta = c.get("metadata", {}).get("nbgrader", {}) or {}
        if meta.get("grade_id"):
            ids.append(meta["grade_id"])
        if meta.get("locked") and len(_norm(c.source)) > 40:
            texts.append(hashlib.sha256(_norm(c.source).encode()).hexdigest())
    return {"ids": sorted(set(ids)), "texts": sorted(set(texts))}


def intake(raw: bytes, release_text: str, assignment: str, known: dict[str, dict], *, scan: bool = True,
           rules: dict[str, tuple[str, list[str]]] | None = None) -> Intake:
    """Rebuild and scan a submission in a limited child; known: {assignment id: fingerprints(...)}.

    rules: {check name: (exercise, forbidden calls)}: the answers are read for those calls here, from the
    text (course_lib.checks.rules.notebook_violations), since a kernel's own report of them is the student's.
    """
    rules = rules or {}
    header = json.dumps({"release": release_text, "assignment": assignment, "known": known, "scan": scan,
                         "rules": rules}).encode()
    cmd = ["prlimit", f"--as={MEMORY_BYTES}", f"--cpu={CPU_SECONDS}", "--core=0", "--",
           sys.executable, "-m", "autograde.intake"]
    try:
        done = boundary.run(cmd, b"%d\n" % len(header) + header + raw, limit=MESSAGE_LIMIT, deadline_s=WALL_SECONDS,
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
        if done.message is None:
            why = (f"reading it took longer than {WALL_SECONDS} s" if done.timed_out else
                   "reading it needed more memory or time than allowed" if done.returncode not in (0, None)
                   else "it could not be read")
            return Intake("invalid_notebook", f"the notebook is too large or too complex to grade: {why}")
        data = boundary.loads(done.message, limit=MESSAGE_LIMIT)
        if not (isinstance(data, dict) and data.get("status") in ("ok", "invalid_notebook", "wrong_assignment")
                and isinstance(data.get("detail", ""), str)):
            raise boundary.Rejected("the intake's answer has an unexpected form")
        if data["status"] != "ok":
            return Intake(data["status"], data["detail"][:1000])
        notes, flags, found = data.get("notes"), data.get("flags"), data.get("rules", {})
        if not (isinstance(data.get("notebook"), str) and isinstance(notes, list) and isinstance(flags, list)
                and all(isinstance(x, str) for x in notes + flags) and isinstance(found, dict)
                and set(found) <= set(rules) and all(isinstance(v, list) and all(isinstance(m, str) for m in v)
                                                     for v in found.values())):
            raise boundary.Rejected("the intake's answer has an unexpected form")
        return Intake("ok", "", data["notebook"], notes[:100], flags[:100],
                      {k: [m[:500] for m in v[:20]] for k, v in found.items() if v})
    except boundary.Rejected as e:
        return Intake("invalid_notebook", f"the notebook could not be read: {e}")


def _identify(cells: list[dict], assignment: str, known: dict[str, dict]) -> str | None:
    """The assignment this notebook recognisably belongs to, if that is not ``assignment``."""
    ids = {(c["metadata"].get("nbgrader") or {}).get("grade_id") for c in cells if isinstance(c["metadata"].get("nbgrader"), dict)}
    texts = {hashlib.sha256(_norm(c["source"]).encode()).hexdigest() for c in cells if len(c["source"]) < 100_000}
    score = {a: len(ids & set(f["ids"])) + len(texts & set(f["texts"])) for a, f in known.items()}
    best = max(score, key=lambda a: (score[a], a == assignment)) if score else assignment
    if best != assignment and score[best] >= 3 and score.get(assignment, 0) * 4 < score[best]:
        return best
    return None


def _main() -> int:
    out_fd = os.dup(1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    stdin = sys.stdin.buffer
    n = int(stdin.readline())
    job = json.loads(stdin.read(n))
    raw = stdin.read()

    def reply(obj: dict) -> int:
        os.write(out_fd, boundary.frame(json.dumps(obj).encode()))
        return 0

    import nbformat

    from autograde.sanitize import InvalidNotebook, parse_submission, rebuild
    try:
        cells = parse_submission(raw)
        sizes = [len(c["source"]) for c in cells]
        if len(cells) > MAX_CELLS or max(sizes, default=0) > MAX_CELL_CHARS or sum(sizes) > MAX_SOURCE_CHARS:
            return reply({"status": "invalid_notebook", "detail": (
                f"too large to grade: {len(cells)} cells, {sum(sizes)} characters of source, the largest cell "
                f"{max(sizes, default=0)} (limits: {MAX_CELLS} cells, {MAX_SOURCE_CHARS} characters, "
                f"{MAX_CELL_CHARS} per cell)")})
        other = _identify(cells, job["assignment"], job["known"])
        if other is not None:
            return reply({"status": "wrong_assignment",
                          "detail": f"this is the notebook of {other}, not of {job['assignment']}: submit it there"})
        nb, notes = rebuild(raw, nbformat.reads(job["release"], as_version=4))
    except RecursionError:
        return reply({"status": "invalid_notebook", "detail": "its JSON is nested too deeply to be a notebook"})
    except (InvalidNotebook, nbformat.ValidationError) as e:
        return reply({"status": "invalid_notebook", "detail": str(e)[:1000] or type(e).__name__})
    except UnicodeError as e:  # a lone surrogate ("\ud800") is valid JSON but no text: it cannot be written out
        return reply({"status": "invalid_notebook", "detail": f"its text is not valid Unicode ({e.reason})"})
    flags: list[str] = []
    tamper: list[str] = []
    if job.get("scan"):
        from autograde.scan import scan_notebook, tampering
        from autograde.course import is_autograded_test, is_demo
        flags = scan_notebook(nb)
        release = nbformat.reads(job["release"], as_version=4)
        course_lines = {line.strip() for c in release.cells if c.cell_type == "code"
                        for line in c.source.splitlines() if line.strip()}
        # what the verification runs (not test or demo cells), on lines the course did not write itself
        tamper = tampering(nb, flags, course_lines, runs=lambda c: not is_autograded_test(c) and not is_demo(c))
        flags += [f for f in tamper if f not in flags]
    found: dict[str, list[str]] = {}
    if job.get("rules"):
        from autograde.course import is_autograded_test, is_demo
        from course_lib.checks.rules import answer_is_stub, notebook_violations
        answers = [c.source for c in nb.cells if c.cell_type == "code" and not is_autograded_test(c)
                   and not is_demo(c)]  # what the kernel and the verification run
        # the checking process is the notebook's own: none of its results can be trusted
        reaching = (["your notebook reaches into the process that checks it (" + "; ".join(tamper)[:300]
                     + "): no result of it can be trusted"] if tamper else [])
        for name, (exercise, forbidden) in job["rules"].items():
            try:
                found[name] = [v.message() for v in notebook_violations(answers, exercise, forbidden)] + reaching
                if answer_is_stub(answers, exercise):
                    # whatever values the process sends for it: a cell elsewhere can answer the calls
                    found[name].append(f"{exercise} is not answered: its definition still only raises "
                                       "NotImplementedError")
            except Exception as e:  # noqa: BLE001 - code that breaks the reader: the rule cannot be checked,
                # so it is not met (a reader that fails open would be a way around every rule)
                found[name] = [f"the answer to {exercise} could not be read for the calls it may not use "
                               f"({type(e).__name__})"]
    return reply({"status": "ok", "notebook": nbformat.writes(nb), "notes": notes, "flags": flags,
                  "rules": found})


if __name__ == "__main__":
    sys.exit(_main())
