"""Intake of one submitted notebook: parse, rebuild, scan and identify it in a child process with
limits.

A submission is hostile input even before any of it runs: JSON nested 100,000 deep, a 4 MB cell that
makes the similarity matching quadratic, or source that makes the static scan's parser take
gigabytes. So the grader never parses it itself. ``intake(...)`` runs ``python -m
autograde.inside.intake`` under an address-space and CPU limit and a wall-clock deadline, and reads
back one framed message through autograde.boundary: either the rebuilt notebook
(autograde.inside.sanitize) with its repair notes and the static scan's flags, or a status with a
detail: ``invalid_notebook`` (not a notebook, too large, too deep, unparseable) or
``wrong_assignment`` (it is recognisably another assignment's notebook).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from autograde import boundary
from autograde.inside import INTAKE
from autograde.inside.cells import norm as _norm

MEMORY_BYTES = 2 << 30
CPU_SECONDS = 60
WALL_SECONDS = 120
MESSAGE_LIMIT = boundary.FRAME_CAP


@dataclass
class Intake:
    """What the grader learns about one submitted notebook before running anything of it."""

    status: str  # "ok", "invalid_notebook" or "wrong_assignment"
    detail: str = ""
    notebook: str = ""  # the rebuilt notebook (nbformat JSON text) when status is "ok"
    notes: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    # check name -> forbidden uses found
    rule_failures: dict[str, list[str]] = field(default_factory=dict)


def fingerprints(release_text: str) -> dict:
    """What identifies an assignment's notebook: its grade ids and hashes of its locked cells'
    text."""
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


def intake(
    raw: bytes,
    release_text: str,
    assignment: str,
    known: dict[str, dict],
    *,
    scan: bool = True,
    rules: dict[str, tuple[str, list[str]]] | None = None,
    skip: Sequence[int] = (),
) -> Intake:
    """Rebuild and scan a submission in a limited child; known: {assignment id: fingerprints(...)}.

    rules: {check name: (exercise, forbidden calls)}: the answers are read for those calls here,
    from the text (course_lib.checks.rules.notebook_violations), since a kernel's own report of them
    is the student's. skip: indices of cells the verification will not run (read as absent).
    """
    rules = rules or {}
    header = json.dumps(
        {
            "release": release_text,
            "assignment": assignment,
            "known": known,
            "scan": scan,
            "rules": rules,
            "skip": list(skip),
        }
    ).encode()
    cmd = ["prlimit", f"--as={MEMORY_BYTES}", f"--cpu={CPU_SECONDS}", "--core=0", "--"]
    cmd += [sys.executable, "-m", INTAKE]
    try:
        done = boundary.run(
            cmd,
            b"%d\n" % len(header) + header + raw,
            limit=MESSAGE_LIMIT,
            deadline_s=WALL_SECONDS,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        )
        if done.message is None:
            why = (
                f"reading it took longer than {WALL_SECONDS} s"
                if done.timed_out
                else "reading it needed more memory or time than allowed"
                if done.returncode not in (0, None)
                else "it could not be read"
            )
            return Intake(
                "invalid_notebook", f"the notebook is too large or too complex to grade: {why}"
            )
        return _answer(boundary.loads(done.message, limit=MESSAGE_LIMIT), rules)
    except boundary.Rejected as e:
        return Intake("invalid_notebook", f"the notebook could not be read: {e}")


def _answer(data: object, rules: dict[str, tuple[str, list[str]]]) -> Intake:
    """The intake child's parsed answer as an Intake, its every field checked (Rejected if not of
    the expected form)."""
    if not (
        isinstance(data, dict)
        and data.get("status") in ("ok", "invalid_notebook", "wrong_assignment")
        and isinstance(data.get("detail", ""), str)
    ):
        raise boundary.Rejected("the intake's answer has an unexpected form")
    if data["status"] != "ok":
        return Intake(data["status"], data["detail"][:1000])
    notes, flags, found = data.get("notes"), data.get("flags"), data.get("rules", {})
    if not (
        isinstance(data.get("notebook"), str)
        and isinstance(notes, list)
        and isinstance(flags, list)
        and all(isinstance(x, str) for x in notes + flags)
        and isinstance(found, dict)
        and set(found) <= set(rules)
        and all(isinstance(v, list) and all(isinstance(m, str) for m in v) for v in found.values())
    ):
        raise boundary.Rejected("the intake's answer has an unexpected form")
    return Intake(
        "ok",
        "",
        data["notebook"],
        notes[:100],
        flags[:100],
        {k: [m[:500] for m in v[:20]] for k, v in found.items() if v},
    )
