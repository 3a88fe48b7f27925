"""Gradescope: an autograder bundle for one assignment, and the grading run inside Gradescope's container.

Gradescope's autograder specification (gradescope-autograders.readthedocs.io, "Autograder Specifications"):
a zip with ``setup.sh`` (run once, as root, when the image is built) and ``run_autograder`` (run for every
submission, working directory ``/autograder``) at its root; the zip's contents appear in
``/autograder/source``, the student's files in ``/autograder/submission``, and ``run_autograder`` must write
``/autograder/results/results.json``: a total ``score`` (or per-test scores), optional ``output``,
``execution_time``, ``stdout_visibility``, and ``tests``, each with ``name``, ``score``, ``max_score``,
``status``, ``output`` and ``visibility``.

``run`` grades the submission with the harness's own public entry point (``autograde.grade.grade``: the
sandboxed kernel, out-of-kernel verification, hidden-safe messages) and turns its details record into
results.json. Gradescope's containers run as root, but may not be allowed to create namespaces (no
CAP_SYS_ADMIN): the sandbox is probed first, and if it cannot run, results.json says so with score 0
instead of running student code unsandboxed. Written answers are left to Gradescope's manual grading.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from autograde.course import REPO, Course, hidden_lines, read_notebook, write_atomic
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
"""
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
"""
REPO_FILES = ("pyproject.toml", "README.md", "course")
SKIP = shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints", "tests", "bugzoo", "*.pyc")


# ------------------------------------------------------------------------------------------------ bundle
def _rel(path: Path, root: Path, what: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(root.resolve()))
    except ValueError:
        raise ValueError(f"{what} {path} is outside the course root {root}: the bundle holds only the root") from None


def _add_tree(zf: zipfile.ZipFile, folder: Path, arc: str, skip=SKIP) -> None:
    for dirpath, dirnames, filenames in os.walk(folder):
        ignored = skip(dirpath, dirnames + filenames)
        dirnames[:] = sorted(d for d in dirnames if d not in ignored)
        for name in sorted(f for f in filenames if f not in ignored):
            p = Path(dirpath) / name
            zf.write(p, f"{arc}/{p.relative_to(folder)}")


def build_bundle(course: Course, assignment: str, dest: Path) -> Path:
    """Write ``dest`` (autograder.zip): setup.sh, run_autograder, course.json, the harness and this assignment."""
    if assignment not in course.assignments():
        raise ValueError(f"unknown assignment {assignment!r}; solutions/ has {course.assignments()}")
    released = course.release / assignment
    if not released.is_dir():
        raise ValueError(f"{released} is missing: run `python -m autograde release {assignment}` first")
    in_repo = course.root.resolve() == REPO.resolve()
    base = "repo" if in_repo else "course"
    spec = {"assignment": assignment, "root": base, "visible_package": course.visible_package,
            "hidden_package": course.hidden_package, "cell_timeout": course.cell_timeout,
            "references_dir": None if course.references_dir is None else _rel(course.references_dir, course.root, "references_dir"),
            "pythonpath": [_rel(p, course.root, "pythonpath entry") for p in course.pythonpath]}
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text in (("setup.sh", SETUP_SH), ("run_autograder", RUN_AUTOGRADER)):
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = 0o100755 << 16   # executable: Gradescope runs them as they are
            zf.writestr(info, text)
        zf.writestr("course.json", json.dumps(spec, indent=1, sort_keys=True) + "\n")
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
            extra = [Path(p).resolve() for p in [*course.pythonpath, *([course.references_dir] if course.references_dir else [])]]
            for p in extra:
                if p.is_dir() and not any(q != p and q in p.parents for q in extra):   # nested: already added
                    _add_tree(zf, Path(p), f"course/{_rel(p, course.root, 'path')}")
    tmp.replace(dest)
    return dest


# ------------------------------------------------------------------------------------------------ run
def load_course(source: Path) -> tuple[Course, str]:
    """The Course and assignment described by SOURCE/course.json (inside an unpacked bundle)."""
    spec = json.loads((source / "course.json").read_text())
    root = (source / spec["root"]).resolve()
    course = Course(root=root, visible_package=spec["visible_package"], hidden_package=spec["hidden_package"],
                    references_dir=root / spec["references_dir"] if spec["references_dir"] else None,
                    pythonpath=tuple(root / p for p in spec["pythonpath"]), cell_timeout=spec["cell_timeout"])
    return course, spec["assignment"]


def sandbox_problem(scratch: Path) -> str | None:
    """None if a sandbox can be made here (checked by running one), else why not."""
    from autograde import sandbox

    reason = sandbox.unavailable()
    if reason:
        return reason
    slot = 255   # the last slot: a probe must not share a uid with a grading job that holds slot 0
    cmd = sandbox.wrap([sys.executable, "-c", "print('ok')"], readonly=[], slot=slot)
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return "a test sandbox did not finish in 60 s"
    if res.returncode != 0 or res.stdout.strip() != "ok":
        return (f"a test sandbox failed ({res.stderr.strip()[-300:] or f'exit status {res.returncode}'}): the "
                "container must let root create namespaces (CAP_SYS_ADMIN, or a seccomp profile allowing "
                "clone/unshare of pid, mount, ipc, uts and net namespaces) and switch users (CAP_SETUID, CAP_SETGID)")
    return None


def find_notebook(submission: Path, assignment: str) -> Path | None:
    """The submitted notebook: one named <assignment>.ipynb anywhere in the submission, else the only notebook."""
    found = sorted(p for p in submission.rglob("*.ipynb") if p.is_file() and not p.is_symlink()
                   and ".ipynb_checkpoints" not in p.parts)
    named = [p for p in found if p.name == f"{assignment}.ipynb"]
    if len(named) == 1:
        return named[0]
    return found[0] if len(found) == 1 else None


def _refusal(output: str, started: float) -> dict:
    return {"score": 0.0, "output": output, "execution_time": int(time.time() - started),
            "stdout_visibility": "hidden", "tests": []}


def _scrub(text: str, secret: list[str]) -> str:
    """The text, minus any line quoting hidden test source (defence in depth: messages never should)."""
    return "\n".join(ln for ln in text.splitlines() if not any(s in ln for s in secret))


def results_from_record(record: dict, secret: list[str] = ()) -> dict:
    """Gradescope's results.json for one graded record (``OUT/details/<student>/<assignment>.json``)."""
    rec = GradeRecord.from_json(record)
    tests, manual = [], []
    for nb_name, nb in sorted((rec.notebooks or {}).items()):
        for t in nb["tests"]:
            if t["result"] not in ("passed", "failed"):   # an answer graded by hand
                manual.append(f"{t['grade_id']} ({t['max_points']:g} point(s))")
                continue
            passed = t["result"] == "passed"
            out = "passed" if passed else (t.get("error") or "failed")
            if t.get("outside_kernel") == "failed" and passed is False and not t.get("error"):
                out = "failed when your answers were checked again outside the notebook"
            tests.append({"name": f"{t['grade_id']}: {t.get('title', '')}".rstrip(": "),
                          "score": float(t["points"]), "max_score": float(t["max_points"]),
                          "status": "passed" if passed else "failed", "output": _scrub(out, list(secret)),
                          "visibility": "visible"})
    lines = [f"Status: {rec.status}" + (f" ({rec.detail})" if rec.detail else "")]
    if manual:
        lines.append("Graded by hand on Gradescope: " + ", ".join(manual))
    return {"score": round(sum(t["score"] for t in tests), 6), "output": _scrub("\n".join(lines), list(secret)),
            "stdout_visibility": "hidden", "tests": tests}


def run(root: Path) -> dict:
    """Grade ROOT/submission with the bundle in ROOT/source; write and return ROOT/results/results.json."""
    started = time.time()
    root = Path(root)
    results_path = root / "results" / "results.json"
    course, assignment = load_course(root / "source")
    work = Path(tempfile.mkdtemp(prefix="autograde-gs-", dir=root))
    try:
        problem = sandbox_problem(work)
        nb = find_notebook(root / "submission", assignment)
        if problem:
            res = _refusal("Not graded: this grader runs student code only inside its sandbox, and the sandbox "
                           f"cannot run in this container: {problem}. Your submission is kept; tell your "
                           "instructor.", started)
        elif nb is None:
            res = _refusal(f"Not graded: no notebook found. Submit {assignment}.ipynb.", started)
        else:
            from autograde.grade import grade
            subs = work / "submitted" / STUDENT / assignment
            subs.mkdir(parents=True)
            shutil.copyfile(nb, subs / f"{assignment}.ipynb")
            try:
                records = grade(course, work / "submitted", work / "out", workers=1, assignments=[assignment],
                                log=lambda *a: print(*a, flush=True), merge=False)
            except Exception:   # the harness failed: say so to the student, the traceback goes to stdout
                import traceback
                traceback.print_exc(file=sys.stdout)
                res = _refusal("Not graded: the grader failed (your instructor sees why in the autograder's "
                               "output). Your submission is kept.", started)
            else:
                secret = [ln for p in course.source_notebooks(assignment) for ln in hidden_lines(read_notebook(p))]
                res = results_from_record(records[0], secret)
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
