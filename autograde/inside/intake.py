"""The intake child: ``python -m autograde.inside.intake``, started by autograde.intake under
prlimit (a limited child, not a sandbox: no student code runs here, but every byte it reads is
hostile).

Reads the job (the release notebook, the assignment, the known fingerprints, the rules) and the
submitted bytes from standard input; parses them leniently, rebuilds the nbgrader metadata from the
release (sanitize.rebuild), reads the text (scan: flags, tampering; course_lib.checks.rules:
forbidden calls, stub answers) and writes one framed message (wire) that autograde.intake checks
field by field. Its readers, autograde.inside.sanitize and autograde.inside.scan, are the grader's
own too (selfcheck rebuilds notebooks, feedback pages are made inert with them); it is the only
module of this package that no sandbox runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Any

from autograde.inside import wire
from autograde.inside.cells import is_autograded_test, is_demo, is_solution
from autograde.inside.cells import norm as _norm

# the course's notebooks have < 150 cells and < 200 KB of source: a submission far past that is not
# an answer, and the grading of its text (matching, nbgrader, feedback) would cost minutes
MAX_CELLS = 1000
MAX_CELL_CHARS = 256_000
MAX_SOURCE_CHARS = 4_000_000


def _identify(cells: list[dict], assignment: str, known: dict[str, dict]) -> str | None:
    """The assignment this notebook recognisably belongs to, if that is not ``assignment``."""
    ids = {
        (c["metadata"].get("nbgrader") or {}).get("grade_id")
        for c in cells
        if isinstance(c["metadata"].get("nbgrader"), dict)
    }
    texts = {
        hashlib.sha256(_norm(c["source"]).encode()).hexdigest()
        for c in cells
        if len(c["source"]) < 100_000
    }
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
        os.write(out_fd, wire.frame(json.dumps(obj).encode()))
        return 0

    import nbformat

    read = _rebuilt(raw, job)
    if isinstance(read, dict):
        return reply(read)
    nb, notes = read
    flags, tamper = _scanned(nb, job) if job.get("scan") else ([], [])
    found = _rules_read(nb, job, tamper) if job.get("rules") else {}
    return reply(
        {
            "status": "ok",
            "notebook": nbformat.writes(nb),
            "notes": notes,
            "flags": flags,
            "rules": found,
        }
    )


def _rebuilt(raw: bytes, job: dict) -> Any:
    """(notebook, notes) rebuilt on the release, or the reply that says why it cannot be."""
    import nbformat

    from autograde.inside.sanitize import InvalidNotebook, parse_submission, rebuild

    try:
        cells = parse_submission(raw)
        sizes = [len(c["source"]) for c in cells]
        if (
            len(cells) > MAX_CELLS
            or max(sizes, default=0) > MAX_CELL_CHARS
            or sum(sizes) > MAX_SOURCE_CHARS
        ):
            return {
                "status": "invalid_notebook",
                "detail": (
                    f"too large to grade: {len(cells)} cells, {sum(sizes)} characters of "
                    "source, the largest cell "
                    f"{max(sizes, default=0)} (limits: {MAX_CELLS} cells, {MAX_SOURCE_CHARS} "
                    "characters, "
                    f"{MAX_CELL_CHARS} per cell)"
                ),
            }
        other = _identify(cells, job["assignment"], job["known"])
        if other is not None:
            return {
                "status": "wrong_assignment",
                "detail": f"this is the notebook of {other}, not of {job['assignment']}: "
                "submit it there",
            }
        return rebuild(raw, nbformat.reads(job["release"], as_version=4))
    except RecursionError:
        return {
            "status": "invalid_notebook",
            "detail": "its JSON is nested too deeply to be a notebook",
        }
    except (InvalidNotebook, nbformat.ValidationError) as e:
        return {"status": "invalid_notebook", "detail": str(e)[:1000] or type(e).__name__}
    # a lone surrogate ("\ud800") is valid JSON but no text: it cannot be written out
    except UnicodeError as e:
        return {
            "status": "invalid_notebook",
            "detail": f"its text is not valid Unicode ({e.reason})",
        }


def _scanned(nb: Any, job: dict) -> tuple[list[str], list[str]]:
    """(flags for the instructor, tampering) of the notebook's cells."""
    import nbformat

    from autograde.inside.scan import scan_notebook, tampering

    flags = scan_notebook(nb)
    release = nbformat.reads(job["release"], as_version=4)
    course_lines = {
        line.strip()
        for c in release.cells
        if c.cell_type == "code"
        for line in c.source.splitlines()
        if line.strip()
    }
    # what the verification runs (not test or demo cells), on lines the course did not write
    # itself
    tamper = tampering(
        nb, flags, course_lines, runs=lambda c: not is_autograded_test(c) and not is_demo(c)
    )
    return flags + [f for f in tamper if f not in flags], tamper


def _rules_read(nb: Any, job: dict, tamper: list[str]) -> dict[str, list[str]]:
    """{check: why its rule is broken} from the text of what the verification runs."""
    import nbformat

    from course_lib.checks.rules import (
        answer_is_stub,
        course_statements,
        given_names,
        notebook_violations,
        rebinds,
    )

    # what the kernel and the verification run; without the cells the verification was told to
    # skip (a cell that killed the kernel or hung: white-box red team 23, D12: read as the answer,
    # never run)
    skip = {i for i in job.get("skip", []) if isinstance(i, int)}
    answers = [
        c.source
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and not is_autograded_test(c) and not is_demo(c) and i not in skip
    ]
    # the checking process is the notebook's own: none of its results can be trusted
    reaching = (
        [
            "your notebook reaches into the process that checks it ("
            + "; ".join(tamper)[:300]
            + "): no result of it can be trusted"
        ]
        if tamper
        else []
    )
    release = nbformat.reads(job["release"], as_version=4)
    course = course_statements([c.source for c in release.cells if c.cell_type == "code"])
    # what the course gives, not the stubs it asks for (solution cells)
    given = given_names(
        [c.source for c in release.cells if c.cell_type == "code" and not is_solution(c)]
    )
    found: dict[str, list[str]] = {}
    for name, (exercise, forbidden) in job["rules"].items():
        try:
            found[name] = [
                v.message() for v in notebook_violations(answers, exercise, forbidden, course)
            ] + reaching
            if exercise in given and rebinds(answers, exercise, course):
                found[name].append(
                    f"{exercise} is the course's own (a given cell: do not edit it), and your "
                    "notebook binds the name again: the check would run yours"
                )
            if answer_is_stub(answers, exercise):
                # whatever values the process sends for it: a cell elsewhere can answer the calls
                found[name].append(
                    f"{exercise} is not answered: its definition still only raises "
                    "NotImplementedError"
                )
        # code that breaks the reader: the rule cannot be checked, so it is not met (a reader that
        # fails open would be a way around every rule)
        except Exception as e:  # noqa: BLE001
            found[name] = [
                f"the answer to {exercise} could not be read for the calls it may not use "
                f"({type(e).__name__})"
            ]
    return found


if __name__ == "__main__":
    sys.exit(_main())
