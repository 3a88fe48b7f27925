"""The adversarial catalog, graded as one class with honest students: as root, and as a grader that
is not root.

Every attack is written as a student would: the answers themselves are wrong (`return 0`), and the
rest of the cell tries to make them pass anyway, to read what it must not, to hurt the grader or a
classmate, or to hang or crash the run (autograde/tests/attacks.py, by class). Malformed submissions
join them: JSON nested 100,000 deep, a FIFO, links to a classmate's notebook and to /dev/zero, a 4
MB cell, two notebooks with wrong names. The attackers know the layout (the course root, the output
folder, a classmate's submission path), as a student who read the harness's source would.

What holds (docs/threat-model.md): the class is graded completely, each row with a named status;
every attacker scores no more than an untouched notebook; every honest row is exactly what it is
without the attackers; no submitted, course or checkout file changes content or mode, nor a
root-only file; no process is left; no hidden check source, reference, solution or classmate's
answer reaches any attacker's output; student markup stays inert in feedback pages; a thread that
never ends costs no wall-clock limit.

Needs root and bubblewrap; ~4 min on 2 cores (three gradings: honest students alone, the class as
root, the class as the unprivileged user `nobody`). The unprivileged run leaves out the attacks that
only play tricks on Python inside the kernel (USERNS_SAME): the checks outside the kernel that
defeat them run the same code in both modes; everything that reaches for files, processes, limits or
the feedback pages is graded in both.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from autograde import sandbox
from autograde.course import REPO
from autograde.grade import Limits, grade
from autograde.record import Status
from autograde.tests import unprivileged
from autograde.tests.attacks import SECRET_MARK, WRONG_SQUARE, answer, attacks
from autograde.tests.conftest import RUN_MARK, digest, fixture_course, student_notebook, submit
from autograde.tests.fixture import make_course

pytestmark = pytest.mark.skipif(
    sandbox.unavailable() is not None or os.geteuid() != 0,
    reason=f"needs root and bubblewrap: {sandbox.unavailable()}",
)

# a short cell limit: the fixture's cells run in milliseconds (no torch), and the attack that blocks
# on a pipe (garbage_reports) waits out the cell's wall-clock backstop (5 x the limit): 64 s at the
# course default of 10
LIMITS = Limits(wall_s=150, memory_bytes=2 << 30, cell_timeout=4)
# in-kernel tricks whose defeat (verification outside the kernel) does not depend on the sandbox's
# mode
USERNS_SAME = ["ast_transformer", "bool_raises", "eq_always_true", "huge_output", "patch_numpy"]
HONEST = {
    "correct": {
        "double": "def double(x):\n    return x * 2\n",
        "square": "def square(x):\n    return x ** 2\n",
        "a_why": "2x = x + x.",
    },
    "partial": {
        "double": "def double(x):\n    return 2 * float(x)\n",
        "square": "def square(x):\n    return x * x\n",
    },
    "untouched": {},
}
MARKDOWN_ATTACK = (
    '<script>alert("PWN-md")</script><img src=x onerror=alert("PWN-mdimg")> '
    "[x](javascript:alert(1))"
)
MALFORMED = [
    "deep_json",
    "fifo",
    "link_to_classmate",
    "link_to_zero",
    "huge_cell",
    "two_notebooks",
    # last three found by a blind red team
    "=HYPERLINK(1)",
    "dirlink_classmate",
    "dirlink_solutions",
]
# strings that must never reach an attacker's output: hidden check source, references, solutions, a
# classmate (the harness's own modules that run in a sandbox are public code: they may mention these
# words, not hold them)
FORBIDDEN = [
    "Case((np.arange(4.0),)",
    "HiddenRegistry(__name__",
    "### BEGIN SOLUTION",
    "### BEGIN HIDDEN TESTS\nfrom",
    "Multiplication distributes",
    "inputs_sha256",
    SECRET_MARK,
    "return x * 2",
    "hidden_check('double_hidden'",
]


def _rows(path: Path) -> dict[str, dict]:
    with open(path) as f:
        # grades.csv quotes a name a spreadsheet would run as a formula with a leading '
        return {r["student"].removeprefix("'"): r for r in csv.DictReader(f)}


def _tree_state(*folders: Path) -> dict[str, tuple[str, int]]:
    """sha256 and mode of every file under the folders (links and special files by their own
    metadata)."""
    state = {}
    for folder in folders:
        for p in sorted(folder.rglob("*")):
            if "__pycache__" in p.parts:
                continue
            st = p.lstat()
            data = (
                p.read_bytes() if p.is_file() and not p.is_symlink() else str(st.st_mode).encode()
            )
            state[str(p)] = (hashlib.sha256(data).hexdigest(), st.st_mode)
    return state


def _write_class(course, folder: Path, out: Path, secret: Path) -> list[str]:
    for student, answers in HONEST.items():
        submit(folder, student, student_notebook(course, answers))
    classmate = folder / "correct" / "fx" / "fx.ipynb"
    catalog = attacks(course.root, classmate, out, secret)
    for name, attack in catalog.items():
        extra = {"a_why": MARKDOWN_ATTACK} if name == "markup" else {}
        submit(
            folder,
            name,
            student_notebook(course, {"double": answer(attack), "square": WRONG_SQUARE, **extra}),
        )
    submit(folder, "deep_json", b"[" * 100_000 + b"]" * 100_000)
    fifo = folder / "fifo" / "fx" / "fx.ipynb"
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    for name, target in [("link_to_classmate", classmate), ("link_to_zero", Path("/dev/zero"))]:
        link = folder / name / "fx" / "fx.ipynb"
        link.parent.mkdir(parents=True)
        link.symlink_to(target)
    submit(
        folder,
        "huge_cell",
        student_notebook(course, {"double": "x = 1  # " + "y" * (4 << 20) + "\n"}),
    )
    # a folder name a spreadsheet would run
    submit(folder, "=HYPERLINK(1)", student_notebook(course, {}))
    # a whole student folder linked to another's
    (folder / "dirlink_classmate").symlink_to(folder / "correct")
    (folder / "dirlink_solutions").mkdir()
    (folder / "dirlink_solutions" / "fx").symlink_to(course.solutions / "fx")
    two = folder / "two_notebooks" / "fx"
    two.mkdir(parents=True)
    for n in ("a.ipynb", "b.ipynb"):
        (two / n).write_text(json.dumps(student_notebook(course, HONEST["correct"])))
    return sorted(catalog)


def _course_state(root: Path) -> dict:
    """The state of the course's and the harness's files, to see that grading changed none."""
    return _tree_state(
        root / "solutions",
        root / "pylib",
        root / "notebooks",
        REPO / "autograde",
        REPO / "course_lib",
    )


def _grade_as_nobody(root: Path, whole_class: Path, out_user: Path) -> None:
    """Grade the same class as `nobody` into OUT_USER (the sandbox then uses user namespaces)."""
    userns_students = sorted({p.name for p in whole_class.iterdir()} - set(USERNS_SAME))
    script = (
        f"import sys; sys.path[:0] = [{str(REPO)!r}]\n"
        "from pathlib import Path\n"
        "from autograde.tests.conftest import fixture_course\n"
        "from autograde.grade import Limits, grade\n"
        f"grade(fixture_course(Path({str(root)!r})), Path({str(whole_class)!r}), "
        f"Path({str(out_user)!r}), workers=2, limits=Limits(**{LIMITS.__dict__!r}),"
        f" students={userns_students!r}, log=lambda *_: None)\n"
    )
    env = {
        "HOME": str(out_user),
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        "TMPDIR": str(out_user),
    }
    from autograde.grade import _model_file

    # the same file as the root run's, not a download into nobody's home
    if _model_file() is not None:
        env["COURSE_MODEL_FILE"] = str(_model_file())
    user = subprocess.run(
        unprivileged.command([sys.executable, "-c", script], env),
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert user.returncode == 0, user.stderr[-3000:]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    # a course and a class the unprivileged user can read; outputs it can write
    base = unprivileged.readable_copy_root()
    root = make_course(base / "course")
    course = fixture_course(root)
    from autograde.release import release

    release(course, log=lambda *_: None)
    secret = tmp_path_factory.mktemp("secret") / "root-only.txt"
    secret.write_text(SECRET_MARK)
    os.chmod(secret, 0o600)
    honest_only, whole_class = base / "honest", base / "class"
    for student, answers in HONEST.items():
        submit(honest_only, student, student_notebook(course, answers))
    out_honest, out_root = base / "out_honest", base / "out_root"
    out_user = unprivileged.shared_folder("out-user-")
    names = _write_class(course, whole_class, out_root, secret)
    for p in [base, *base.rglob("*")]:
        if not p.is_symlink():
            os.chmod(p, os.lstat(p).st_mode | 0o055 if p.is_dir() else os.lstat(p).st_mode | 0o044)
    before_subs = digest(whole_class)
    before_course = _course_state(root)
    before_secret = (secret.read_bytes(), secret.stat().st_mode)
    grade(course, honest_only, out_honest, workers=2, limits=LIMITS, log=lambda *_: None)
    grade(course, whole_class, out_root, workers=2, limits=LIMITS, log=lambda *_: None)
    _grade_as_nobody(root, whole_class, out_user)
    after_course = _course_state(root)
    yield {
        "honest": _rows(out_honest / "grades.csv"),
        "runs": {"root": out_root, "userns": out_user},
        "class": {"root": _rows(out_root / "grades.csv"), "userns": _rows(out_user / "grades.csv")},
        "folder": whole_class,
        "before": before_subs,
        "attacks": names,
        "secret": secret,
        "before_secret": before_secret,
        "course_changes": {
            k
            for k in before_course.keys() | after_course.keys()
            if before_course.get(k) != after_course.get(k)
        },
    }
    shutil.rmtree(base, ignore_errors=True)
    shutil.rmtree(out_user, ignore_errors=True)
    # this course's check packages share their names with the session's fixture course: forget them
    for name in [m for m in sys.modules if m.split(".")[0] in ("fx_checks", "fx_hidden")]:
        del sys.modules[name]
    sys.path[:] = [p for p in sys.path if p != str(root / "pylib")]


MODES = ["root", "userns"]


@pytest.mark.parametrize("mode", MODES)
def test_the_whole_class_is_graded_each_row_with_a_named_status(graded, mode):
    rows = graded["class"][mode]
    left_out = set(USERNS_SAME) if mode == "userns" else set()
    assert set(rows) == (set(HONEST) | set(graded["attacks"]) | set(MALFORMED)) - left_out
    assert all(r["status"] in [s.value for s in Status] for r in rows.values())
    assert all(
        r["detail"] for s, r in rows.items() if r["status"] not in ("graded", "needs_manual_grade")
    ), rows


@pytest.mark.parametrize("mode", MODES)
def test_honest_students_get_exactly_what_they_get_without_the_attackers(graded, mode):
    # the comparison below is not between zeros
    assert float(graded["honest"]["correct"]["score"]) == 3
    for student in HONEST:
        assert graded["class"][mode][student] == graded["honest"][student], student


@pytest.mark.parametrize("mode", MODES)
def test_no_attacker_scores_more_than_an_untouched_notebook(graded, mode):
    rows = graded["class"][mode]
    for name in [*graded["attacks"], *MALFORMED]:
        if mode == "userns" and name in USERNS_SAME:
            continue
        assert float(rows[name]["score"]) <= float(rows["untouched"]["score"]), rows[name]


def test_malformed_submissions_get_their_own_status(graded):
    rows = graded["class"]["root"]
    assert (
        rows["deep_json"]["status"] == "invalid_notebook" and "deep" in rows["deep_json"]["detail"]
    )
    for name in ("fifo", "link_to_classmate", "link_to_zero"):
        assert (
            rows[name]["status"] == "invalid_notebook" and "plain file" in rows[name]["detail"]
        ), rows[name]
    assert (
        rows["two_notebooks"]["status"] == "ambiguous"
        and "a.ipynb, b.ipynb" in rows["two_notebooks"]["detail"]
    )
    for name in ("dirlink_classmate", "dirlink_solutions"):
        assert rows[name]["status"] == "invalid_notebook" and "is a link" in rows[name]["detail"], (
            rows[name]
        )
    with open(graded["runs"]["root"] / "grades.csv") as f:
        assert "\n'=HYPERLINK(1),fx," in f.read()  # shown as text, not run as a formula
    assert rows["huge_cell"]["status"] in [s.value for s in Status]


@pytest.mark.parametrize("mode", MODES)
def test_attacks_that_fooled_the_kernel_are_flagged(graded, mode):
    """Patching the checks passes in the kernel; the verification outside the kernel disagrees."""
    for attack in ["patch_check_engine", "input_transformer", "sys_modules"]:
        row = graded["class"][mode][attack]
        assert row["status"] == "flagged" and "outside it" in row["detail"], row


def test_no_submitted_course_checkout_or_root_only_file_changed(graded):
    assert digest(graded["folder"]) == graded["before"]
    assert graded["course_changes"] == set()
    assert (graded["secret"].read_bytes(), graded["secret"].stat().st_mode) == graded[
        "before_secret"
    ]


def test_no_process_outlives_the_runs(graded):
    import psutil

    # RUN_MARK: this run's background_process, not another user's
    marks = (RUN_MARK, "999.5", "10 ** 6")
    left = [
        p.pid
        for p in psutil.process_iter(["cmdline"])
        if any(m in " ".join(p.info["cmdline"] or []) for m in marks)
    ]
    assert left == []


def _outputs(out: Path, student: str) -> str:
    """What the student's code made the grader write: feedback page, details, grades.csv and every
    cell output of the autograded notebook (its sources are the student's own and, for instructors,
    the rubrics), base64 decoded."""
    texts = [
        p.read_text(errors="replace")
        for p in [
            out / "grades.csv",
            *(out / "feedback" / student).rglob("*.html"),
            *(out / "details" / student).rglob("*.json"),
        ]
    ]
    for p in (out / "autograded" / student).rglob("*.ipynb"):
        texts += [json.dumps(c.get("outputs", [])) for c in json.loads(p.read_text())["cells"]]
    import base64

    decoded = []
    for run in re.findall(r"[A-Za-z0-9+/]{16,}={0,2}", "\n".join(texts)):
        try:
            decoded.append(base64.b64decode(run + "=" * (-len(run) % 4)).decode(errors="replace"))
        except ValueError:
            pass
    return "\n".join(texts + decoded)


@pytest.mark.parametrize("mode", MODES)
def test_no_secret_reaches_any_attackers_output(graded, mode):
    out = graded["runs"][mode]
    for name in graded["attacks"]:
        if mode == "userns" and name in USERNS_SAME:
            continue
        text = _outputs(out, name)
        leaked = [s for s in FORBIDDEN if s in text or json.dumps(s)[1:-1] in text]
        assert leaked == [], (name, leaked)
    # the hook ran: it only had nothing hidden to leak
    assert "LEAK" in _outputs(out, "leak_hidden_source")


class _Markup(HTMLParser):
    def __init__(self):
        super().__init__()
        self.live: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self._in_script = tag == "script"
        for k, v in attrs:
            if k.startswith("on") or "PWN" in (v or "") or (v or "").startswith("javascript:"):
                self.live.append(f"<{tag} {k}={v!r}>")

    def handle_data(self, data):
        if self._in_script and "PWN" in data:
            self.live.append(f"<script>{data[:80]}")


@pytest.mark.parametrize("mode", MODES)
def test_student_markup_is_inert_in_feedback(graded, mode):
    page = graded["runs"][mode] / "feedback" / "markup" / "fx" / "fx.html"
    text = page.read_text()
    assert "PWN-print" in text and "PWN-md" in text  # the student's text is shown ...
    parser = _Markup()
    parser.feed(text)
    assert parser.live == []  # ... as text, never as markup


@pytest.mark.parametrize("mode", MODES)
def test_a_thread_that_never_ends_costs_no_time_limit(graded, mode):
    row = graded["class"][mode]["endless_thread"]
    assert row["status"] != "timeout", row
    timings = [
        json.loads(line)
        for line in (graded["runs"][mode] / "timings.jsonl").read_text().splitlines()
    ]
    wall = next(t["wall_s"] for t in timings if t["student"] == "endless_thread")
    assert wall < LIMITS.wall_s / 2, wall


def test_huge_output_is_cut(graded):
    path = graded["runs"]["root"] / "autograded" / "huge_output" / "fx" / "fx.ipynb"
    assert path.stat().st_size < 5 << 20


def test_a_grader_without_user_namespaces_or_root_is_refused_in_one_line(tmp_path):
    """No traceback and nothing written: the message names what to install or enable."""
    out = unprivileged.shared_folder("refused-")
    env = {"HOME": str(out), "PATH": "/nonexistent", "PYTHONPATH": str(REPO)}
    r = subprocess.run(
        unprivileged.command(
            [sys.executable, "-m", "autograde", "grade", str(tmp_path), "--out", str(out / "o")],
            env,
        ),
        capture_output=True,
        text=True,
        timeout=120,
    )
    try:
        assert r.returncode == 2, r.stderr
        assert (
            r.stderr.count("\n") == 1
            and "cannot grade safely" in r.stderr
            and "bubblewrap" in r.stderr
        ), r.stderr
        assert "Traceback" not in r.stderr and not (out / "o").exists()
    finally:
        shutil.rmtree(out, ignore_errors=True)
