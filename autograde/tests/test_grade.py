"""Grading sample submissions of the fixture assignment end to end (nbgrader, real kernels).

Slow by nature (a grading run costs ~6 s of CPU per student): one folder of thirteen students graded
with two workers (~40 s on 2 cores), two of them again with one worker (~10 s), one wall-clock-limit
case (~4 s).
"""

from __future__ import annotations

import csv
import html
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest

from autograde.course import dump_json
from autograde.grade import Limits, grade
from autograde.record import GradeRecord, Status
from autograde.tests import unprivileged
from autograde.tests.conftest import (
    REAL_ASSIGNMENTS,
    RUN_MARK,
    digest,
    grade_on_command_line,
    handed_over,
    student_notebook,
    submit,
    temp_owners,
)

CORRECT = {
    "double": "def double(x):\n    return x * 2\n",
    "square": "def square(x):\n    return x ** 2\n",
    "a_why": "Because 2x = x + x by distributivity.",
}
LIMITS = Limits(wall_s=120, memory_bytes=2 << 30)
_TEMP_OWNERS: list = []  # the temporary folder's owners before and after the `graded` run
# every payload that runs leaves its name in window.__p
PUSH = "(window.__p = window.__p || []).push"
MARKUP = (
    f"Because 2x = x + x. <img src=x onerror=\"{PUSH}('markdown')\">\n\n"
    f"[see my plot](javascript:{PUSH}('link')) <svg onload=\"{PUSH}('svg')\"></svg>"
)
RAW_MARKUP = f"<script>{PUSH}('raw')</script>"
NAME = f"<img src=x onerror=\"{PUSH}('name')\">"  # a display name from the LMS, in the roster


def _samples(course, folder: Path) -> dict[str, tuple[float, str]]:
    """Write the sample submissions; return student -> (expected score, expected status).

    Why long: a table of samples, each with its expected score and status."""
    submit(folder, "correct", student_notebook(course, CORRECT))
    submit(folder, "untouched", student_notebook(course))
    # right for numbers (the visible check passes), wrong for arrays (a hidden case fails)
    submit(
        folder,
        "wrong",
        student_notebook(
            course, {**CORRECT, "double": "def double(x):\n    return 2 * float(x)\n"}
        ),
    )
    submit(
        folder,
        "loop",
        student_notebook(
            course, {**CORRECT, "double": "def double(x):\n    while True:\n        pass\n"}
        ),
    )
    submit(
        folder,
        "exit",
        student_notebook(
            course, {**CORRECT, "double": "import os\ndef double(x):\n    os._exit(3)\n"}
        ),
    )
    fill = (
        "def square(x):\n    hog = [bytearray(100 << 20) for _ in range(60)]  # 6 GB\n    "
        "return x * x\n"
    )
    submit(folder, "memory", student_notebook(course, {**CORRECT, "square": fill}))
    stripped = student_notebook(course, CORRECT)
    for i, cell in enumerate(stripped["cells"]):
        cell["metadata"], cell["id"] = {}, f"colab{i}"
    submit(folder, "stripped", stripped)
    text = json.dumps(student_notebook(course, CORRECT))
    submit(folder, "invalid", text[: len(text) // 2])
    logging_ = {
        **CORRECT,
        "double": "import logging, sys, warnings\ndef double(x):\n    logging.warning('doubling "
        "%s', x)\n"
        "    print('debug', file=sys.stderr)\n    warnings.warn('careful')\n    return 2 * x\n",
    }
    submit(folder, "logging", student_notebook(course, logging_))
    renamed = submit(folder, "renamed", student_notebook(course, CORRECT))
    renamed.rename(renamed.with_name("fx (1).ipynb"))  # as a browser saves a second download
    sleeper = (
        "import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', "
        f"'import time; time.sleep(999.25)  # {RUN_MARK}'])\n"
    )
    submit(
        folder,
        "background",
        student_notebook(course, {**CORRECT, "square": sleeper + CORRECT["square"]}),
    )
    # a rule the exercise sets ("do not use numpy.square"), broken through an alias in a helper,
    # with the in-kernel reader of the rules patched away: the grader reads the submitted text
    # itself
    forbidden = (
        "import numpy as np\nimport course_lib.checks.rules as r\n"
        "r.function_violations = lambda *a, **k: []\nsq = np.square\n"
        "def helper(x):\n    return sq(x)\n\ndef square(x):\n    return helper(x)\n"
    )
    submit(folder, "forbidden", student_notebook(course, {**CORRECT, "square": forbidden}))
    # markup in a written answer, an added markdown cell and a raw cell: inert text for whoever
    # opens the pages
    markup = student_notebook(course, {**CORRECT, "a_why": MARKUP})
    markup["cells"] += [
        {"cell_type": "raw", "metadata": {"format": "text/html"}, "source": RAW_MARKUP},
        {"cell_type": "markdown", "metadata": {}, "source": "![plot](attachment:missing.png)"},
    ]
    submit(folder, "markup", markup)
    # an honest student who moved the square answer to the top (ids intact): graded as if in place
    moved = student_notebook(course, CORRECT)
    square = next(
        c for c in moved["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") == "square"
    )
    moved["cells"].remove(square)
    moved["cells"].insert(0, square)
    submit(folder, "moved", moved)
    # the instructor notebook itself, through a hard link into solutions/ (a red team's): graded,
    # and flagged
    (folder / "instructor" / "fx").mkdir(parents=True)
    os.link(course.solutions / "fx" / "fx.ipynb", folder / "instructor" / "fx" / "fx.ipynb")
    # a student who prints a right guess of a hidden test line: their page is theirs (withholding
    # it, as the guard once did, told them the guess was right)
    guess = {
        **CORRECT,
        "square": "print(\"hidden_check('double_hidden', double)\")\n" + CORRECT["square"],
    }
    submit(folder, "guess", student_notebook(course, guess))
    # both answers written in the double cell, the square cell deleted: graded as written, no stub
    # put back
    onecell = student_notebook(
        course, {**CORRECT, "double": CORRECT["double"] + "\n" + CORRECT["square"]}
    )
    onecell["cells"] = [
        c for c in onecell["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id") != "square"
    ]
    submit(folder, "onecell", onecell)
    # a worker thread started by another cell does the forbidden call (the run-time watch sees its
    # own thread only): the verification refuses to judge the rule next to a running thread of the
    # notebook's
    worker = (
        "import threading, queue\nimport numpy as np\njobs, done = queue.Queue(), queue.Queue()\n"
        "def _work():\n    while True:\n        done.put(np.square(jobs.get()))\n"
        "threading.Thread(target=_work, daemon=True).start()\n"
        "def square(x):\n    jobs.put(x)\n    return done.get()\n"
    )
    submit(folder, "worker", student_notebook(course, {**CORRECT, "square": worker}))
    # answers that record the inputs they are called with, and a visible check that would print
    # them: every visible check runs before any hidden one, so no hidden input reaches a message the
    # student sees
    leak = {
        **CORRECT,
        "double": "SEEN = []\ndef double(x):\n    SEEN.append(x)\n    return x * 2\n",
        "square": "def square(x):\n    odd = [s for s in SEEN if not isinstance(s, (int, float))]\n"
        "    if odd:\n        raise ValueError(f'SEEN {odd!r}')\n    return x ** 2\n",
    }
    submit(folder, "leak", student_notebook(course, leak))
    # an answer that searches the verification process's memory (objects, callers' frames) for the
    # checks' inputs during a visible check, to print them in its message: it finds the visible
    # check's (so the search works: it fails that check outside the kernel, where it has something
    # to print), never a hidden one
    snoop = {
        **CORRECT,
        "square": (
            "import gc, sys\ndef square(x):\n"
            "    found = [o for o in gc.get_objects() if isinstance(o, dict) and "
            "isinstance(o.get('payloads'), dict)]\n"
            "    f = sys._getframe()\n    while f is not None:\n"
            "        found += [v for k, v in f.f_locals.items() if k in ('job', 'payloads') and "
            "isinstance(v, dict)]\n"
            "        f = f.f_back\n"
            "    names = sorted({n for d in found for n in d.get('payloads', d)})\n"
            "    if names:\n"
            "        raise ValueError('SNOOPED ' + repr(names))\n    return x ** 2\n"
        ),
    }
    submit(folder, "snoop", student_notebook(course, snoop))
    # the published visible cases looked up (test_twins.py), something cruder computed for every
    # other input (here right on the hidden cases, wrong on other positive numbers): the visible
    # check's twin (its cases in disguise, outside the kernel) fails, so the cell does, and the row
    # asks for a look
    lookup = {
        **CORRECT,
        "double": (
            "PUBLISHED = {3: 6, 0.5: 1.0}\ndef double(x):\n"
            "    if isinstance(x, (int, float)) and x in PUBLISHED:\n        return PUBLISHED[x]\n"
            "    return x + 3 if isinstance(x, (int, float)) and x > 0 else 2 * x\n"
        ),
    }
    submit(folder, "lookup", student_notebook(course, lookup))
    # a white-box red team: a lone surrogate in an answer's error message (no UTF-8 can write it)
    # crashed the writing of the record, after the per-student catch-all, and so the whole run
    surrogate = {**CORRECT, "double": "def double(x):\n    raise ValueError('odd shape \\ud800')\n"}
    submit(folder, "surrogate", student_notebook(course, surrogate))
    # the same red team: names that are not UTF-8 (they reach Python as lone surrogates) stopped the
    # run too: a student's folder (not a student id: `invalid_name`) and a valid student's notebook
    # file (graded as renamed)
    bad = os.fsencode(folder) + b"/bad\xff/fx"
    os.makedirs(bad)
    Path(os.fsdecode(bad + b"/fx.ipynb")).write_text(json.dumps(student_notebook(course, CORRECT)))
    renamed_bytes = submit(folder, "bytesname", student_notebook(course, CORRECT))
    os.rename(renamed_bytes, os.fsencode(renamed_bytes.parent) + b"/fx \xff.ipynb")
    (folder / "absent" / "fx").mkdir(parents=True)
    # a folder name that is markup, a glob pattern and two lines: not graded, said so by name
    submit(folder, "odd <img src=x onerror=1> [x]*\nname", student_notebook(course, CORRECT))
    return {
        "correct": (3, "needs_manual_grade"),
        "untouched": (0, "graded"),
        "wrong": (1, "needs_manual_grade"),
        "loop": (1, "timeout"),
        "exit": (1, "kernel_died"),
        "memory": (2, "memory_limit"),
        "stripped": (3, "needs_manual_grade"),
        "invalid": (0, "invalid_notebook"),
        # a process started by an answer runs code no reading of the text sees (values from
        # forbidden routines, work no counter counts): it reaches past the checking process, and no
        # result counts
        "logging": (3, "needs_manual_grade"),
        "background": (0, "flagged"),
        "renamed": (3, "needs_manual_grade"),
        "absent": (0, "missing"),
        # the kernel (patched) passed square, the grader's reading did not; patching the checks' own
        # module reaches into the checking process, so no result of the notebook counts outside: a
        # look is asked for
        "forbidden": (0, "flagged"),
        "markup": (3, "needs_manual_grade"),
        "moved": (3, "needs_manual_grade"),
        "instructor": (3, "flagged"),
        "odd <img src=x onerror=1> [x]*\nname": (0, "invalid_name"),
        "guess": (3, "needs_manual_grade"),
        "onecell": (3, "needs_manual_grade"),
        "worker": (0, "flagged"),
        "leak": (3, "needs_manual_grade"),
        # it walks the checking process's frames: no result of it counts
        "snoop": (0, "flagged"),
        "lookup": (1, "flagged"),
        "surrogate": (1, "needs_manual_grade"),
        "bad\ufffd": (0, "invalid_name"),
        "bytesname": (3, "needs_manual_grade"),
    }


def _rows(path: Path) -> list[dict]:
    with open(path) as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def graded(fx_course, tmp_path_factory, foreign_slots):
    folder = tmp_path_factory.mktemp("submitted")
    expected = _samples(fx_course, folder)
    before = digest(folder)
    out = tmp_path_factory.mktemp("out")
    temp = Path(tempfile.gettempdir())
    owners_before = temp_owners(temp)
    records = grade(fx_course, folder, out, workers=2, limits=LIMITS, log=lambda *_: None)
    _TEMP_OWNERS[:] = [owners_before, temp_owners(temp)]
    return fx_course, folder, out, expected, before, {r["student"]: r for r in records}


@pytest.fixture(scope="module")
def foreign_slots():
    """Another user's slot folder in the temporary folder, as a colleague who graded earlier leaves
    it (as root only: only root can make a folder for another uid; one already there is left as it
    is)."""
    folder = Path(tempfile.gettempdir()) / f"autograde-slots-{unprivileged.UID}"
    made = os.geteuid() == 0 and not os.path.lexists(folder)
    if made:
        folder.mkdir(0o700)
        os.chown(folder, unprivileged.UID, unprivileged.UID)
    yield folder
    if made:
        shutil.rmtree(folder, ignore_errors=True)


def test_each_sample_gets_the_right_score_and_status(graded):
    _, _, out, expected, _, records = graded
    got = {r["student"]: (float(r["score"]), r["status"]) for r in _rows(out / "grades.csv")}
    assert got == {s: (float(sc), st) for s, (sc, st) in expected.items()}
    assert all(float(r["max_score"]) == 4 for r in _rows(out / "grades.csv"))
    # the breakdown says which test failed and why
    loop = records["loop"]["notebooks"]["fx"]["tests"]
    assert [t["result"] for t in loop] == ["failed", "passed", "needs_manual_grade"]
    assert loop[0]["error"].startswith("CellTimeoutError")
    wrong = records["wrong"]["notebooks"]["fx"]["tests"][0]["error"]
    # + a derived "called twice" case
    assert wrong.startswith("CheckFailed: double_hidden: failed on some of its 3 cases")
    # how many failed is the answer's to choose: a channel (threat model)
    assert "2 of 3" not in wrong
    # a hidden check's expected values and inputs stay with the instructor (details), never in
    # feedback
    assert (
        "input:" not in wrong
        and "array([" not in wrong
        and "expected" not in wrong
        and "'array'" not in wrong
    )
    assert (
        "input: (array([0., 1., 2., 3.]))" in records["wrong"]["hidden_failures"]["fx/test_double"]
    )
    page = (out / "feedback" / "wrong" / "fx" / "fx.html").read_text()
    assert (
        "double_hidden: failed on some of its 3 cases" in page
        and "'array'" not in html.unescape(page)
    )
    assert "expected [" not in page
    assert "killed the kernel" in records["exit"]["detail"]
    assert "ran out of memory" in records["memory"]["detail"]
    assert "not valid JSON" in records["invalid"]["detail"]
    rule = records["forbidden"]["notebooks"]["fx"]["tests"][1]
    assert (
        rule["result"] == "failed"
        and "line 6 of helper(): `return sq(x)` uses numpy.square" in rule["error"]
    )
    assert "passed in the kernel but failed outside it" in records["forbidden"]["detail"]
    assert records["renamed"]["notes"][0] == "graded fx (1).ipynb as fx.ipynb"
    assert (
        "answer 'double' holds the instructor notebook's solution or hidden-test markers"
        in records["instructor"]["flags"]
    )
    worker = records["worker"]["notebooks"]["fx"]["tests"][1]
    # a thread is where the checks do not watch: the reading of the text fails every check of the
    # notebook
    assert worker["result"] == "failed" and "import threading" in worker["error"], worker
    leak = (out / "feedback" / "leak" / "fx" / "fx.html").read_text()
    assert "array(" not in html.unescape(leak) and "SEEN [" not in html.unescape(leak)
    snooped = records["snoop"]["notebooks"]["fx"]["tests"][1]["error"]
    # before the fix: ['double', 'double_hidden', 'square']
    assert "SNOOPED ['double', 'square']\n" in snooped
    looked = records["lookup"]["notebooks"]["fx"]["tests"][0]
    assert looked["result"] == "failed" and "but not the same cases in disguise" in looked["error"]
    # nothing of its inputs
    assert "[twin]" not in looked["error"] and "double__twin" not in looked["error"]
    assert "passed in the kernel but failed outside it" in records["lookup"]["detail"]
    # the instructor sees which cases
    assert "[twin]" in records["lookup"]["hidden_failures"]["fx/test_double"]


def test_every_details_file_is_a_typed_record_that_comes_back_byte_for_byte(graded):
    """What the grader wrote parses as a GradeRecord (every condition's kind a Status), whose status
    is the first Status among its conditions, and whose JSON is the file again (autograde/record.py,
    test_record.py)."""
    _, _, out, expected, _, _ = graded
    files = sorted((out / "details").glob("*/*.json"))
    assert len(files) == len(expected)
    for p in files:
        text = p.read_text(encoding="utf-8")
        rec = GradeRecord.from_json(json.loads(text))
        assert dump_json(rec.to_json()) == text, p
        assert rec.status is Status.most_severe(c.kind for c in rec.conditions), p


def test_no_process_outlives_its_grading(graded):
    import psutil

    leftovers = [
        p for p in psutil.process_iter(["cmdline"]) if RUN_MARK in " ".join(p.info["cmdline"] or [])
    ]
    assert leftovers == []


def test_grading_leaves_shared_folders_to_their_owners(graded, foreign_slots):
    """Regression: sandbox set-up once handed the whole temporary folder to a sandbox user. Judged
    on what this grading run changed: other users' slot folders (one is planted beside the run, as
    root) are theirs."""
    before, after = _TEMP_OWNERS
    assert handed_over(before, after, os.getuid()) == []
    if os.geteuid() == 0:
        # the colleague's folder is still theirs
        assert after[foreign_slots.name] == unprivileged.UID


def test_the_ownership_check_sees_a_folder_handed_to_a_sandbox_user(tmp_path):
    """The check above can fail: a folder given to a sandbox uid, or the temporary folder itself, is
    reported; a colleague's own slot folder made meanwhile is not."""
    from autograde.sandbox import FIRST_UID

    (tmp_path / "autograde-slots-0").mkdir()
    before = temp_owners(tmp_path)
    me = os.getuid()
    assert handed_over(before, temp_owners(tmp_path), me) == []
    if os.geteuid() != 0:
        pytest.skip("handing a folder to another uid needs root")
    (tmp_path / f"autograde-slots-{unprivileged.UID}").mkdir()
    os.chown(tmp_path / f"autograde-slots-{unprivileged.UID}", unprivileged.UID, unprivileged.UID)
    # named after its owner: theirs, by design
    assert handed_over(before, temp_owners(tmp_path), me) == []
    os.chown(tmp_path / "autograde-slots-0", FIRST_UID, FIRST_UID)
    os.chown(tmp_path, FIRST_UID, FIRST_UID)
    assert handed_over(before, temp_owners(tmp_path), me) == [".", "autograde-slots-0"]
    for uid in (FIRST_UID, FIRST_UID + 1):  # made and given to a sandbox uid, named after it or not
        (tmp_path / f"autograde-slots-{uid}").mkdir()
        os.chown(tmp_path / f"autograde-slots-{uid}", FIRST_UID, FIRST_UID)
        assert f"autograde-slots-{uid}" in handed_over(before, temp_owners(tmp_path), me)
    os.chown(tmp_path, me, me)


def test_submitted_files_are_never_modified(graded):
    _, folder, _, _, before, _ = graded
    assert digest(folder) == before


def test_feedback_never_shows_hidden_tests(graded):
    _, _, out, _, _, _ = graded
    pages = sorted((out / "feedback").rglob("*.html"))
    assert {p.parts[-3] for p in pages} == {
        "correct",
        "untouched",
        "wrong",
        "loop",
        "exit",
        "memory",
        "stripped",
        "logging",
        "background",
        "renamed",
        "forbidden",
        "markup",
        "moved",
        "instructor",
        "guess",
        "onecell",
        "worker",
        "leak",
        "snoop",
        "lookup",
        "surrogate",
        "bytesname",
    }
    for page in pages:
        text = html.unescape(re.sub(r"<[^>]+>", "", page.read_text()))
        # what the student printed is theirs; nothing else of the hidden test
        if page.parts[-3] == "guess":
            text = text.replace("hidden_check('double_hidden', double)", "", 2)
        assert (
            "hidden_check" not in text and "fx_hidden" not in text and "HIDDEN TESTS" not in text
        ), page
    wrong = html.unescape(
        re.sub(r"<[^>]+>", "", (out / "feedback" / "wrong" / "fx" / "fx.html").read_text())
    )
    # the verdict of the hidden check, not its code
    assert "double_hidden: failed on some of its 3 cases" in wrong


def test_one_worker_gives_the_same_results_and_reruns_reuse_them(graded, tmp_path, monkeypatch):
    """... and a trusted pass in a plain process gives what the fork server's gave (the graded
    class used autograde.forkserver; this run has none)."""
    from autograde import grade as grade_module

    course, folder, out, _, _, _ = graded
    subset = tmp_path / "subset"
    for s in ("correct", "wrong"):
        shutil.copytree(folder / s, subset / s)
    out1 = tmp_path / "out1"
    plain = []
    real = grade_module._run_worker

    def no_server(*_):
        raise OSError("no fork server")

    def counted(jobdir, env, deadline, server=None):
        plain.append(server is None)
        return real(jobdir, env, deadline, server)

    monkeypatch.setattr(grade_module, "ForkServer", no_server)
    monkeypatch.setattr(grade_module, "_run_worker", counted)
    grade(course, subset, out1, workers=1, limits=LIMITS, log=lambda *_: None)
    monkeypatch.undo()
    assert plain == [True, True]
    rows2 = [r for r in _rows(out / "grades.csv") if r["student"] in ("correct", "wrong")]
    assert _rows(out1 / "grades.csv") == rows2
    for s in ("correct", "wrong"):
        a = json.loads((out1 / "details" / s / "fx.json").read_text())
        b = json.loads((out / "details" / s / "fx.json").read_text())
        # it covers the check modules, which may differ in time
        a.pop("fingerprint"), b.pop("fingerprint")
        assert a == b
        pages = [(o / "feedback" / s / "fx" / "fx.html").read_text() for o in (out1, out)]
        assert pages[0] == pages[1] and "double" in pages[0]
    # a rerun reuses every result (nothing is regraded) and writes the same CSV
    text = (out1 / "grades.csv").read_text()
    timings = (out1 / "timings.jsonl").read_text()
    grade(course, subset, out1, workers=1, limits=LIMITS, log=lambda *_: None)
    assert (out1 / "grades.csv").read_text() == text and (
        out1 / "timings.jsonl"
    ).read_text() == timings


def test_wall_clock_limit(fx_course, tmp_path):
    # the answer waits (no CPU, so the per-cell CPU limit never fires) far past the run's wall-clock
    # limit: the outcome does not depend on how fast this machine starts a kernel (CI once finished
    # a correct notebook in 2 s)
    slow = dict(CORRECT, double="import time\ntime.sleep(600)\n" + CORRECT["double"])
    submit(tmp_path / "subs", "slow", student_notebook(fx_course, slow))
    records = grade(
        fx_course, tmp_path / "subs", tmp_path / "out", limits=Limits(wall_s=2), log=lambda *_: None
    )
    assert records[0]["status"] == "timeout" and records[0]["score"] == 0
    assert "wall-clock limit of 2 s" in records[0]["detail"]


def test_manual_scores_entered_in_formgrader_reach_the_csv(graded):
    from nbgrader.api import Gradebook

    from autograde.gradebook import export

    _, _, out, _, _, _ = graded
    assert (out / "nbgrader_config.py").exists() and (
        out / "autograded" / "correct" / "fx" / "fx.ipynb"
    ).exists()
    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        g = gb.find_grade("a_why", "fx", "fx", "correct")
        assert g.auto_score is None and g.needs_manual_grade
        g.manual_score, g.needs_manual_grade = 1.0, False
        gb.db.commit()
    rows = {r["student"]: r for r in _rows(out / "grades.csv")}
    assert (rows["correct"]["score"], rows["correct"]["status"]) == ("3", "needs_manual_grade")
    export(out)
    rows = {r["student"]: r for r in _rows(out / "grades.csv")}
    assert (rows["correct"]["score"], rows["correct"]["status"]) == ("4", "graded")
    assert (rows["wrong"]["score"], rows["wrong"]["status"]) == ("1", "needs_manual_grade")


@pytest.mark.skipif(not REAL_ASSIGNMENTS, reason="no solutions/ in this checkout")
def test_command_line_on_the_real_course(tmp_path):
    """`python -m autograde grade` end to end, on submissions that need no kernel (~10 s)."""
    _, rows = grade_on_command_line(tmp_path)
    assert rows["nobody"]["status"] == "missing" and rows["broken"]["status"] == "invalid_notebook"
    assert float(rows["broken"]["max_score"]) > 0 and rows["broken"]["score"] == "0"


def test_a_crash_halfway_loses_no_grade_already_written(graded, tmp_path, monkeypatch):
    """The harness dies while grading 'memory': everything graded before it is on disk, and
    reused."""
    from autograde import grade as grade_module

    course, folder, out, _, _, _ = graded
    # (out/grades.csv already has a manual score from the test above: compare to truth)
    out2 = tmp_path / "out"
    # earlier results: the rerun below reuses them
    shutil.copytree(out / "details", out2 / "details")
    (out2 / "details" / "memory").rename(out2 / "details-memory")
    real = grade_module.Grader._grade

    def crash(self, job, t, raws, unreadable):
        if job.student == "memory":
            raise KeyboardInterrupt("power cut")
        return real(self, job, t, raws, unreadable)

    monkeypatch.setattr(grade_module.Grader, "_grade", crash)
    with pytest.raises(KeyboardInterrupt):
        grade(course, folder, out2, workers=1, limits=LIMITS, log=lambda *_: None)
    done = {r["student"] for r in _rows(out2 / "grades.csv")}
    assert done == {
        "absent",
        "bad\ufffd",
        "background",
        "bytesname",
        "correct",
        "exit",
        "forbidden",
        "guess",
        # sorted before 'memory'
        "instructor",
        "invalid",
        "leak",
        "logging",
        "lookup",
        "loop",
        "markup",
    }
    expected = graded[3]
    assert all(
        (float(r["score"]), r["status"]) == expected[r["student"]]
        for r in _rows(out2 / "grades.csv")
    )


def _tags(page: str) -> list[str]:
    """Start tags of an HTML page, as written (attributes included)."""
    return re.findall(r"<[a-zA-Z][^>]*>", page)


def test_student_markup_is_text_in_every_page_the_harness_writes(graded):
    """The written answer, an added markdown cell and a raw cell of 'markup': no live tag in the
    feedback page or in formgrader's copy, the text still readable (generated cases:
    test_markup.py)."""
    _, _, out, _, _, _ = graded
    page = (out / "feedback" / "markup" / "fx" / "fx.html").read_text()
    copy = (out / "autograded" / "markup" / "fx" / "fx.ipynb").read_text()
    for text in (page, copy):
        assert "window.__p" in html.unescape(text)  # shown ...
    # ... as text
    assert not [
        t for t in _tags(page) if re.search(r"onerror|onload|<script>\(window|javascript:|<svg", t)
    ]
    nb = json.loads(copy)
    # the release's text: as written
    assert "".join(nb["cells"][0]["source"]).startswith("# Fixture assignment")
    student = [
        c
        for c in nb["cells"][1:]
        if c["cell_type"] in ("markdown", "raw")
        and not c["metadata"].get("nbgrader", {}).get("locked")
        and not c["metadata"].get("autograde")
    ]
    assert len(student) == 3 and all(c["cell_type"] == "markdown" for c in student)
    assert all("".join(c["source"]).startswith('<pre class="student-markdown">') for c in student)
    assert "attachments" not in json.dumps(student)


@pytest.fixture
def formgrader(graded, tmp_path):
    """(base URL, token): a Jupyter server with formgrader in OUT, as an instructor opens it (`cd
    OUT && jupyter lab`)."""
    import os
    import secrets
    import signal
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    _, _, out, _, _, _ = graded
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    token = secrets.token_hex(16)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_", "COURSE_GRADING"))}
    env.update(
        JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
        JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
        IPYTHONDIR=str(tmp_path / "ipython"),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
    )
    cmd = [
        sys.executable,
        "-m",
        "jupyter_server",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={out}",
    ]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    log = open(tmp_path / "server.log", "wb")
    proc = subprocess.Popen(
        cmd, cwd=out, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 120
        while True:
            assert proc.poll() is None, (tmp_path / "server.log").read_text()[-3000:]
            try:
                req = urllib.request.Request(
                    f"{base}/api/status", headers={"Authorization": f"token {token}"}
                )
                with urllib.request.urlopen(req, timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            assert time.time() < deadline, "the Jupyter server did not answer in 120 s"
            time.sleep(0.5)
        yield base, token
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


def _gradebook_grades(out: Path) -> list:
    """Every grade of assignment fx in OUT's nbgrader gradebook: its scores and whether it needs
    manual grading, sorted."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        return sorted(
            (
                sub.student_id,
                nb.name,
                g.name,
                g.auto_score,
                g.manual_score,
                g.needs_manual_grade,
            )
            for sub in gb.assignment_submissions("fx")
            for nb in sub.notebooks
            for g in nb.grades
        )


def _with_live_markup(inert: str) -> dict:
    """The autograded notebook INERT with the written answer's cell holding MARKUP as typed: what
    the manual-grading page showed before answers were made inert."""
    live = json.loads(inert)
    for cell in live["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == "a_why":
            cell["source"] = MARKUP
    return live


def test_formgrader_page_runs_no_student_markup(graded, formgrader, tmp_path):
    """Opening 'markup's manual-grading page in a real browser runs none of the student's markup
    (answer, added cells, a display name from the roster), and changes no grade. Control: the same
    page from a copy that was not made inert and a name written into the gradebook as it came (as
    before these guarantees) runs them, so the browser check can see a payload that runs."""
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="pip install playwright (the course's `test` extra)"
    )
    chromium = Path(os.environ.get("COURSE_CHROMIUM", "/usr/bin/chromium"))
    if not chromium.exists():
        pytest.skip(f"no Chromium at {chromium} (apt-get install chromium)")
    from nbgrader.api import Gradebook

    from autograde.gradebook import import_roster

    _, _, out, _, _, _ = graded
    base, token = formgrader

    with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
        sid = gb.find_submission_notebook("fx", "fx", "markup").id
    before = _gradebook_grades(out)
    nb_path = out / "autograded" / "markup" / "fx" / "fx.ipynb"
    inert = nb_path.read_text()
    live = _with_live_markup(inert)
    roster = tmp_path / "roster.csv"
    with open(roster, "w", newline="") as f:
        csv.writer(f).writerows(
            [["id", "first", "last", "email"], ["markup", NAME, "Student", "m@example.org"]]
        )
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(chromium),
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
        )
        try:
            page = browser.new_page()

            def visit() -> dict:
                page.goto(f"{base}/formgrader/submissions/{sid}/?token={token}")
                page.wait_for_selector(".student-markdown, .rendered_html", timeout=60_000)
                # an onerror fires once the broken image has failed to load
                page.wait_for_timeout(1500)
                return page.evaluate(
                    "() => ({ran: window.__p || [], text: document.body.innerText, "
                    "html: document.documentElement.outerHTML})"
                )

            try:
                nb_path.write_text(json.dumps(live))
                with Gradebook(f"sqlite:///{out / 'gradebook.db'}") as gb:
                    gb.update_or_create_student("markup", first_name=NAME, last_name="Student")
                control = visit()
            finally:
                nb_path.write_text(inert)
                import_roster(out, roster)  # as an instructor imports it: names made plain text
            assert {"markdown", "svg", "name"} <= set(control["ran"]), control["ran"]
            seen = visit()
        finally:
            browser.close()
    assert seen["ran"] == []
    assert f"onerror=\"{PUSH}('markdown')\"" in seen["text"]  # the answer, readable as typed
    assert f"{PUSH}('raw')" in seen["text"] and "attachment:missing.png" in seen["text"]
    # the name (hidden until asked for), minus markup
    assert "Student, img src=x onerror=" in seen["html"]
    assert _gradebook_grades(out) == before


def test_the_trusted_pass_gets_what_is_left_of_the_wall_clock_and_a_stopped_one_is_a_timeout(
    fx_course, tmp_path, monkeypatch
):
    """nbgrader's pass (no student code) is bounded by the wall-clock budget, not a fixed backstop:
    it gets what is left, at least TRUSTED_PASS_MIN_S; when it is stopped the row says `timeout`,
    with why."""
    import time as _time

    from autograde import grade as grade_module

    real, allowed = grade_module._run_worker, []

    def stopped_at_once(jobdir, env, deadline, server=None):
        allowed.append(deadline - _time.monotonic())
        # the deadline has passed as it starts: the real kill path (of the fork server's child)
        assert server is not None and server.serves(env)
        return real(jobdir, env, _time.monotonic(), server)

    monkeypatch.setattr(grade_module, "_run_worker", stopped_at_once)
    submit(tmp_path / "subs", "s", student_notebook(fx_course, CORRECT))
    records = grade(
        fx_course,
        tmp_path / "subs",
        tmp_path / "out",
        limits=Limits(wall_s=100),
        log=lambda *_: None,
    )
    assert grade_module.TRUSTED_PASS_MIN_S <= allowed[0] <= 100
    assert (records[0]["status"], records[0]["score"]) == ("timeout", 0)
    assert "nbgrader's pass over the notebook took longer than" in records[0]["detail"]


def test_a_folder_the_grader_cannot_list_does_not_stop_the_class(fx_course, tmp_path, monkeypatch):
    """A white-box red team, grading as a user other than root, left a 0700 student folder: listing
    it raised in find_jobs and no one was graded. Now the others are found and that student's row
    says why (simulated here: root can list any folder)."""
    from autograde.grade import find_jobs

    for s in ("ann", "locked", "zed"):
        submit(tmp_path, s, student_notebook(fx_course, CORRECT))
    real = Path.iterdir

    def iterdir(self):
        if self.name == "locked" or self.parent.name == "locked":
            raise PermissionError(13, "Permission denied")
        return real(self)

    monkeypatch.setattr(Path, "iterdir", iterdir)
    jobs, assignments = find_jobs(fx_course, tmp_path)
    assert assignments == ["fx"] and [j.student for j in jobs] == ["ann", "locked", "zed"]
