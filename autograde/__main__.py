"""Command line: ``python -m autograde
{release,publish,grade,selfcheck,export,measure,roster,course-folder,lms-import,
lms-export,lms-feedback,stage-feedback,report,similarity,gradescope} ...`` (``--help`` on each)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TypedDict

from autograde.course import Course, tools_beside_python


class _CourseOptions(TypedDict, total=False):
    """The Course fields the command line can set (the others keep their defaults)."""

    root: Path
    cell_timeout: int
    deadlines_path: Path


def _course(args) -> Course:
    kw: _CourseOptions = {}
    if args.root:
        kw["root"] = Path(args.root).resolve()
    if getattr(args, "cell_timeout", None):
        kw["cell_timeout"] = args.cell_timeout
    if args.deadlines:
        kw["deadlines_path"] = Path(args.deadlines).resolve()
    return Course(**kw)


def _uncommitted(root: Path, paths: list[str]) -> list[str]:
    """Files under ``paths`` that git reports changed or untracked; none where ``root`` is not a git
    checkout."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--", *paths],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    return (
        [line[3:] for line in done.stdout.splitlines() if line.strip()]
        if done.returncode == 0
        else []
    )


def _parser() -> argparse.ArgumentParser:
    """The command line: one sub-command per step of an instructor's term.

    Why long: a declaration read top to bottom, each sub-command with its options and their help
    after the other (as nbgrader's traitlets); split, the one page of the command line would be
    scattered."""
    p = argparse.ArgumentParser(prog="python -m autograde", description=__doc__)
    p.add_argument("--root", help="course root (default: this repository)")
    p.add_argument(
        "--deadlines",
        help="the course file of due dates, extensions and the late policy "
        "(default: ROOT/deadlines.toml; docs/instructors.md)",
    )
    sub = p.add_subparsers(dest="cmd", required=True)

    r = sub.add_parser(
        "release", help="regenerate notebooks/ and autograde/references/ from solutions/"
    )
    r.add_argument("assignments", nargs="*")
    r.add_argument("--check", action="store_true", help="only report stale files; exit 1 if any")

    pu = sub.add_parser(
        "publish",
        help="write the student edition (no solutions, no grader) to OUT/how-llms-work "
        "and OUT/how-llms-work.zip",
    )
    pu.add_argument("out")
    pu.add_argument(
        "--repo-url",
        help="the GitHub repository students get it from (https://github.com/ORG/REPO): "
        "Colab badges and set-up cells point there; without it, no Colab links",
    )
    pu.add_argument(
        "--allow-dirty",
        action="store_true",
        help="publish even if course_lib/ or notebooks/ have uncommitted changes (they are copied "
        "as is)",
    )

    g = sub.add_parser(
        "grade", help="grade SUBMISSIONS/<student>/<assignment>/<notebook>.ipynb into OUT"
    )
    g.add_argument("submissions")
    g.add_argument("--out", required=True)
    g.add_argument("--workers", type=int, default=1)
    g.add_argument("--assignment", action="append", help="grade only this assignment (repeatable)")
    g.add_argument("--student", action="append", help="grade only this student (repeatable)")
    g.add_argument("--force", action="store_true", help="regrade even where inputs did not change")
    g.add_argument(
        "--wall-s", type=float, default=900.0, help="wall-clock limit per student and assignment"
    )
    g.add_argument("--memory-gb", type=float, default=4.0, help="kernel address-space limit")
    g.add_argument("--cell-timeout", type=int, help="seconds per cell (default 120)")
    g.add_argument(
        "--cluster",
        help="grade on Dask: local:N | tcp://HOST:PORT | slurm[:JOBS] (docs/scaling.md)",
    )
    g.add_argument(
        "--no-sandbox",
        action="store_true",
        help="run student code as the grader, unverified (only for code you trust; "
        "docs/sandbox.md)",
    )

    s = sub.add_parser(
        "selfcheck",
        help="references score 100%%, untouched notebooks 0, every bug-zoo entry caught",
    )
    s.add_argument("assignments", nargs="*")
    s.add_argument("--workers", type=int, default=2)
    s.add_argument(
        "--min-bugs", type=int, default=5, help="bug-zoo entries required per graded exercise"
    )
    s.add_argument(
        "--skip-notebooks",
        action="store_true",
        help="only the in-process checks (no nbgrader runs)",
    )

    e = sub.add_parser(
        "export", help="rewrite OUT/grades.csv including manual scores entered in formgrader"
    )
    e.add_argument("out")

    f = sub.add_parser(
        "feedback",
        help="rebuild OUT's feedback pages with manual scores and comments "
        "(after marking in formgrader), then rewrite grades.csv",
    )
    f.add_argument("out")

    m = sub.add_parser("measure", help="core-seconds: top-to-bottom run vs grading, per notebook")
    m.add_argument("assignments", nargs="*")

    ro = sub.add_parser(
        "roster", help="give OUT's students names and emails from a CSV (id, first, last, email)"
    )
    ro.add_argument("out")
    ro.add_argument("roster")

    cf = sub.add_parser(
        "course-folder",
        help="make OUT the course's one nbgrader course folder for formgrader: every "
        "released assignment in its gradebook, older per-assignment folders "
        "folded in with their manual marks",
    )
    cf.add_argument("out")
    cf.add_argument(
        "--from",
        dest="sources",
        action="append",
        default=[],
        help="an older output folder of one or more assignments (e.g. graded/02; repeatable)",
    )

    li = sub.add_parser(
        "lms-import",
        help="unpack a Canvas or Moodle 'download all submissions' zip into SUBMISSIONS",
    )
    li.add_argument("zip")
    li.add_argument(
        "--assignment", required=True, help="assignment id: the notebook becomes <id>/<id>.ipynb"
    )
    li.add_argument(
        "--to", required=True, help="submissions folder (nbgrader layout), e.g. submitted"
    )
    li.add_argument("--lms", choices=["canvas", "moodle", "auto"], default="auto")
    li.add_argument(
        "--roster", help="roster CSV (id, first, last, email): name students by its ids"
    )
    li.add_argument(
        "--times",
        action="append",
        default=[],
        help="Canvas: submission times (the API's submissions JSON, or a CSV with submitted_at and "
        "user_id, sis_user_id or login_id; repeatable; docs/instructors.md, section 2b)",
    )

    lx = sub.add_parser(
        "lms-export", help="final grades of OUT as a Canvas gradebook or Moodle grade-import CSV"
    )
    lx.add_argument("out")
    lx.add_argument("--lms", choices=["canvas", "moodle"], required=True)
    lx.add_argument("--to", required=True, help="CSV file to write")
    lx.add_argument(
        "--column",
        help="grade column name (Canvas: the assignment's column header, "
        "e.g. '02 Logits (1234)'; Moodle: any, mapped at import); default: the assignment id",
    )
    lx.add_argument("--assignment", help="which assignment of OUT (default: the only one)")
    lx.add_argument("--roster", help="roster CSV (default: OUT/roster.csv if present)")
    lx.add_argument(
        "--submissions",
        help="the folder lms-import wrote (its record gives Canvas user ids and "
        "tells Moodle participant ids from roster ids)",
    )

    lf = sub.add_parser(
        "lms-feedback",
        help="OUT's feedback pages as Canvas's re-upload zip or Moodle's feedback-files "
        "zip, named by the ids in the zip lms-import read",
    )
    lf.add_argument("out")
    lf.add_argument("dest", help="zip file to write")
    lf.add_argument("--lms", choices=["canvas", "moodle"], required=True)
    lf.add_argument(
        "--submissions", required=True, help="the folder lms-import wrote (holds its record)"
    )
    lf.add_argument("--assignment", required=True)

    sf = sub.add_parser(
        "stage-feedback",
        help="put each exchange submission's secret beside its feedback pages in OUT, "
        "for nbgrader release_feedback (docs/instructors.md)",
    )
    sf.add_argument("out")
    sf.add_argument("--submissions", required=True, help="nbgrader's submitted/ folder (collect)")
    sf.add_argument("--assignment", required=True)

    cr = sub.add_parser(
        "report",
        help="class report: per exercise score distribution and most frequent failing checks "
        "(HTML with plots, CSVs)",
    )
    cr.add_argument("out")
    cr.add_argument(
        "dest", help="folder to write report.html, exercises.csv, failures.csv, students.csv into"
    )
    cr.add_argument("--assignment", help="only this assignment")

    si = sub.add_parser(
        "similarity",
        help="pairs of submissions whose answer cells are unusually similar "
        "(copydetect; a report to read, never a penalty)",
    )
    si.add_argument(
        "source",
        help="OUT (reads OUT/autograded) or a submissions folder <student>/<assignment>/*.ipynb",
    )
    si.add_argument("dest", help="folder to write similarity.html and similarity.csv into")
    si.add_argument("--assignment", action="append", help="only this assignment (repeatable)")
    si.add_argument("--top", type=int, default=50, help="pairs listed per assignment")

    gs = sub.add_parser(
        "gradescope",
        help="build a Gradescope autograder zip (setup.sh, run_autograder) for one assignment",
    )
    gs.add_argument("assignment")
    gs.add_argument("--to", default="autograder.zip")
    return p


def _cmd_release(course, args: argparse.Namespace, t0: float) -> int:
    """`release`."""
    if args.check:
        from autograde.selfcheck import stale_files

        stale = stale_files(course, args.assignments or None)
        for line in stale:
            print("stale:", line)
        return 1 if stale else 0
    from autograde.release import release

    for path in release(course, args.assignments or None):
        print("wrote", path)
    return 0


def _cmd_publish(course, args: argparse.Namespace, t0: float) -> int:
    """`publish`."""
    from autograde.publish import publish

    if not args.allow_dirty and (dirty := _uncommitted(course.root, ["course_lib", "notebooks"])):
        print(
            "autograde publish: uncommitted changes would go to students as they are on disk: "
            + ", ".join(dirty[:5])
            + (" ..." if len(dirty) > 5 else "")
            + " (commit or discard them, or pass --allow-dirty)",
            file=sys.stderr,
        )
        return 2
    try:
        edition = publish(course, Path(args.out), args.repo_url)
    except (ValueError, FileExistsError) as e:
        print(f"autograde publish: {e}", file=sys.stderr)
        return 2
    print(
        f"wrote {edition.folder} and {edition.zip} (run `python -m autograde release --check` "
        "first: the edition holds the committed notebooks/)"
    )
    return 0


def _cmd_grade(course, args: argparse.Namespace, t0: float) -> int:
    """`grade`."""
    from autograde import sandbox
    from autograde.deadlines import load
    from autograde.grade import Limits, grade

    try:
        # a mistake in the course file stops here, before anything is graded
        load(course.deadlines_file)
    except (ValueError, RuntimeError) as e:
        print(f"autograde: {e}", file=sys.stderr)
        return 2
    if args.no_sandbox:
        print(
            "autograde: WARNING: --no-sandbox: student code runs as you, can read every file you "
            "can "
            "(hidden checks, solutions, other students) and is not contained; every row is marked "
            "'unsandboxed'. Use it only for code you trust.",
            file=sys.stderr,
        )
    elif sandbox.unavailable():
        print(f"autograde: cannot grade safely: {sandbox.unavailable()}", file=sys.stderr)
        return 2
    else:
        from autograde.grade import slot_problem

        if why := slot_problem():
            print(f"autograde: cannot grade safely: {why}", file=sys.stderr)
            return 2
    limits = Limits(
        wall_s=args.wall_s,
        memory_bytes=int(args.memory_gb * (1 << 30)),
        cell_timeout=args.cell_timeout,
        sandbox=not args.no_sandbox,
    )
    if args.cluster:
        from autograde.cluster import grade_on_cluster

        records = grade_on_cluster(
            course,
            Path(args.submissions),
            Path(args.out),
            args.cluster,
            limits=limits,
            assignments=args.assignment,
            students=args.student,
            force=args.force,
        )
    else:
        from autograde import boundary

        # this process parses what sandboxes send: past its budget an allocation fails here (that
        # student's `error` row) instead of the machine running out (docs/sandbox.md, "Bounds")
        boundary.limit_memory(boundary.GRADER_BYTES + args.workers * boundary.WORKER_BYTES)
        try:
            records = grade(
                course,
                Path(args.submissions),
                Path(args.out),
                workers=args.workers,
                limits=limits,
                assignments=args.assignment,
                students=args.student,
                force=args.force,
            )
        # another run holds OUT, or stale notebooks: one line, nothing written
        except RuntimeError as e:
            print(f"autograde: {e}", file=sys.stderr)
            return 2
    csv_path = Path(args.out) / "grades.csv"
    print(f"graded {len(records)} submission(s) in {time.perf_counter() - t0:.1f} s -> {csv_path}")
    return 0


def _cmd_selfcheck(course, args: argparse.Namespace, t0: float) -> int:
    """`selfcheck`."""
    from autograde.selfcheck import selfcheck

    ok = selfcheck(
        course,
        args.assignments or None,
        workers=args.workers,
        min_bugs=args.min_bugs,
        notebooks=not args.skip_notebooks,
    )
    print(f"selfcheck {'passed' if ok else 'FAILED'} in {time.perf_counter() - t0:.1f} s")
    return 0 if ok else 1


def _cmd_export(course, args: argparse.Namespace, t0: float) -> int:
    """`export`."""
    from autograde.gradebook import export

    records = export(Path(args.out))
    print(f"exported {len(records)} row(s) -> {Path(args.out) / 'grades.csv'}")
    return 0


def _cmd_roster(course, args: argparse.Namespace, t0: float) -> int:
    """`roster`."""
    from autograde.gradebook import import_roster

    n = import_roster(Path(args.out), Path(args.roster))
    print(f"roster: {n} student(s) -> {Path(args.out) / 'gradebook.db'}")
    return 0


def _cmd_course_folder(course, args: argparse.Namespace, t0: float) -> int:
    """`course-folder`."""
    from autograde.course import shown
    from autograde.gradebook import course_folder

    try:
        done = course_folder(Path(args.out), course, [Path(s) for s in args.sources])
    except (ValueError, RuntimeError) as e:
        print(f"autograde: {e}", file=sys.stderr)
        return 2
    for a, n in sorted(done.folded.items()):
        print(f"folded in {a}: {n} student(s)")
    for line in done.skipped:
        print(shown(f"left alone: {line}"))
    print(
        f"{Path(args.out)} serves {len(done.assignments)} assignment(s) "
        f"({', '.join(done.assignments)}); "
        f"{done.marks} manual mark(s) copied. Formgrader: cd {args.out} && jupyter lab"
    )
    return 0


def _cmd_lms_import(course, args: argparse.Namespace, t0: float) -> int:
    """`lms-import`."""
    # zip member and display names are the students': no escape sequences
    from autograde.course import shown
    from autograde.deadlines import load
    from autograde.lms import import_zip

    times = None
    if args.times:
        from autograde.canvas_times import read_times

        try:
            times = read_times([Path(t) for t in args.times])
        except (OSError, ValueError) as e:
            print(shown(f"autograde: {e}"), file=sys.stderr)
            return 2
    res = import_zip(
        Path(args.zip),
        Path(args.to),
        args.assignment,
        lms=args.lms,
        roster=Path(args.roster) if args.roster else None,
        zip_timezone=load(course.deadlines_file).zip_timezone,
        times=times,
    )
    for student, src in sorted(res.placed.items()):
        # Moodle's zip time, Canvas's from --times (docs/instructors.md, 2b)
        account = res.accounts[student]
        print(
            shown(f"{student}: {src}")
            + (" (late)" if student in res.late else "")
            + (f" (submitted {account.submitted_at})" if account.submitted_at else "")
            + (f" (no time: {account.why_no_time})" if account.why_no_time else "")
        )
    for member, why in res.skipped:
        print(shown(f"skipped {member}: {why}"))
    for line in res.unmatched:
        print(shown(f"named by the LMS id: {line}"))
    for c in res.collisions:
        print(shown(c.line()))
    print(f"imported {len(res.placed)} submission(s) -> {Path(args.to)}")
    return 0


def _cmd_lms_export(course, args: argparse.Namespace, t0: float) -> int:
    """`lms-export`."""
    from autograde.lms import export_grades

    n = export_grades(
        Path(args.out),
        Path(args.to),
        args.lms,
        column=args.column,
        assignment=args.assignment,
        roster=Path(args.roster) if args.roster else None,
        submissions=Path(args.submissions) if args.submissions else None,
    )
    print(f"wrote {n} row(s) -> {args.to}")
    return 0


def _cmd_lms_feedback(course, args: argparse.Namespace, t0: float) -> int:
    """`lms-feedback`."""
    from autograde.course import shown
    from autograde.feedback_zip import build

    res = build(Path(args.out), Path(args.dest), args.lms, Path(args.submissions), args.assignment)
    if res.unnamed:
        print(
            shown(
                f"not in the {args.lms} zip lms-import read (no feedback file for them): "
                f"{', '.join(res.unnamed)}"
            )
        )
    print(f"wrote {len(res.members)} feedback page(s) -> {args.dest}")
    return 0


def _cmd_stage_feedback(course, args: argparse.Namespace, t0: float) -> int:
    """`stage-feedback`."""
    from autograde.course import shown
    from autograde.feedback_zip import stage_release_feedback

    staged, without = stage_release_feedback(
        Path(args.out), Path(args.submissions), args.assignment
    )
    if without:
        print(
            shown(
                "no exchange submission secret (not submitted through nbgrader): "
                f"{', '.join(without)}"
            )
        )
    print(
        f"staged {len(staged)} student(s); now: cd {args.out} && nbgrader release_feedback "
        f"{args.assignment} "
        "--course=COURSE_ID"
    )
    return 0


def _cmd_report(course, args: argparse.Namespace, t0: float) -> int:
    """`report`."""
    from autograde.report import write_report

    paths = write_report(Path(args.out), Path(args.dest), assignment=args.assignment)
    for path in paths:
        print("wrote", path)
    return 0


def _cmd_similarity(course, args: argparse.Namespace, t0: float) -> int:
    """`similarity`."""
    from autograde.similarity import write_similarity

    paths = write_similarity(
        Path(args.source), Path(args.dest), assignments=args.assignment, top=args.top, course=course
    )
    for path in paths:
        print("wrote", path)
    return 0


def _cmd_gradescope(course, args: argparse.Namespace, t0: float) -> int:
    """`gradescope`."""
    from autograde.gradescope import build_bundle

    path = build_bundle(course, args.assignment, Path(args.to))
    print(f"wrote {path}")
    return 0


def _cmd_feedback(course, args: argparse.Namespace, t0: float) -> int:
    """`feedback`."""
    from autograde.gradebook import export, regenerate_feedback

    pages = regenerate_feedback(Path(args.out))
    export(Path(args.out))
    print(f"wrote {len(pages)} feedback page(s) and {Path(args.out) / 'grades.csv'}")
    return 0


def _cmd_measure(course, args: argparse.Namespace, t0: float) -> int:
    """`measure`."""
    from autograde.selfcheck import measure

    measure(course, args.assignments or None)
    return 0


COMMANDS = {  # the sub-command's name -> what runs it
    "release": _cmd_release,
    "publish": _cmd_publish,
    "grade": _cmd_grade,
    "selfcheck": _cmd_selfcheck,
    "export": _cmd_export,
    "roster": _cmd_roster,
    "course-folder": _cmd_course_folder,
    "lms-import": _cmd_lms_import,
    "lms-export": _cmd_lms_export,
    "lms-feedback": _cmd_lms_feedback,
    "stage-feedback": _cmd_stage_feedback,
    "report": _cmd_report,
    "similarity": _cmd_similarity,
    "gradescope": _cmd_gradescope,
    "feedback": _cmd_feedback,
    "measure": _cmd_measure,
}


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status."""
    tools_beside_python()
    args = _parser().parse_args(argv)
    course = _course(args)
    command = COMMANDS.get(args.cmd)
    return command(course, args, time.perf_counter()) if command else 2


if __name__ == "__main__":
    sys.exit(main())
