"""A notebook cell that speaks for the verification's answers: what it can and cannot buy (issue
37).

A white-box red team (it had read autograde/) left every answer as the template's stub and, from a
top-level cell running inside the verification child, wrote the visible outcomes frame itself, read
the hidden payloads from standard input and wrote the second frame: 19/20 on 02, `graded`,
unflagged. Now the process that runs the cells (the answers' process) holds neither of the grader's
pipes: a relay that runs no cell holds them, asks for one check at a time and frames what it writes
itself (autograde.inside.relay._child). What these tests hold:

- the answers' process has /dev/null as standard input and output, and cannot open the relay's
descriptors
  (the relay is not dumpable);
- a frame it writes before it is asked is taken as its reply to the next check the relay asks,
nothing more:
  no check it was not asked, no hidden input before its check, the run goes on;
- a broken frame ends the asking, not the run: the remaining checks fail with a fixed text the
grader wrote;
- an exercise whose answer is still the stub scores nothing, whatever values its process sends (the
  submission's text, read outside: `course_lib.checks.rules.answer_is_stub` in autograde.intake);
- nothing that process wrote reaches a hidden check's page (`verify._public`).

Root and bubblewrap (the real verification sandbox); ~60 s.
"""

from __future__ import annotations

import os

import pytest

from autograde import sandbox
from autograde.tests.test_watch_record import A, _submission

pytestmark = pytest.mark.skipif(
    sandbox.unavailable() is not None or os.geteuid() != 0,
    reason=f"needs root and bubblewrap: {sandbox.unavailable()}",
)

LEAK = "LEAKED-HIDDEN-INPUT"
# What a cell finds of the process it runs in, sent out as a tamper record (the instructor's flag,
# read back here): its descriptors' kinds, what standard input holds, and whether the relay's output
# pipe can be opened.
PROBE = """
import json, os
kinds = {}
for fd in sorted(os.listdir('/proc/self/fd'), key=int):
    try:
        kinds[fd] = os.readlink('/proc/self/fd/' + fd).split(':')[0]
    except OSError:
        pass
try:
    got = os.read(0, 64)
    stdin = 'read %d bytes' % len(got)
except OSError as e:
    stdin = type(e).__name__
try:
    os.close(os.open('/proc/%d/fd/1' % os.getppid(), os.O_WRONLY))
    relay = 'opened'
except OSError as e:
    relay = type(e).__name__
sock = [int(fd) for fd, kind in kinds.items() if kind == 'socket']
note = json.dumps({"check": "*", "rule": "PROBE " + json.dumps({"fds": kinds, "stdin": stdin, "relay": relay})})
os.write(sock[0], b"w%d\\n" % len(note) + note.encode())
"""  # noqa: E501
# A frame written before any check is asked: every check of the notebook, with right values for
# softmax (the reference's) and an error elsewhere; then it waits for hidden inputs that would come
# on standard input.
FORGER = (
    f"LEAK = {LEAK!r}\n"
    + PROBE
    + """
import torch
from autograde.inside.codec import decode
from course_lib.checks.engine import Outcome

def _soft(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)

forged = {}
for name in ("softmax", "softmax_hidden", "log_softmax"):
    forged[name] = json.dumps([{"label": "*", "error": LEAK, "mutated": []}])
data = json.dumps(forged).encode()
os.write(sock[0], b"%d\\n" % len(data) + data)
"""
)


def _probe(verdict) -> dict:
    import json

    found = [t for t in verdict.tamper_reports if "PROBE " in t]
    assert found, verdict.tamper_reports
    return json.loads(found[0].split("PROBE ", 1)[1])


def _run(cell: str):
    import nbformat

    from autograde.course import Course
    from autograde.grade import _model_file, _Slot
    from autograde.intake import intake
    from autograde.verify import rules_of, verify_notebook

    course = Course()
    source = course.source_notebooks(A)[0]
    # the answer cells keep the stub; the forger sits in a cell of its own, as the red team's did
    nb = nbformat.reads(_submission({}), as_version=4)
    nb.cells.insert(1, nbformat.v4.new_code_cell(cell))
    notebook = nbformat.writes(nb)
    got = intake(
        notebook.encode(),
        course.release_notebook(A, A).read_text(),
        A,
        {},
        rules=rules_of(course, source),
    )
    assert got.status == "ok", got.detail
    slot = _Slot()
    try:
        verdict = verify_notebook(
            course,
            source,
            got.notebook,
            slot=slot.n,
            model_file=_model_file(),
            step_timeout=60,
            rule_failures=got.rule_failures,
        )
    finally:
        slot.release()
    return got, verdict


def test_the_answers_process_holds_none_of_the_graders_pipes_and_a_forged_frame_buys_nothing():
    from autograde.verify import TAMPER_MESSAGE

    got, verdict = _run(FORGER)
    assert verdict.error is None, (verdict.error, verdict.stderr_tail[-500:])
    probe = _probe(verdict)
    # what the process said is the instructor's (tamper_reports), never the flag's text (a row's
    # detail, which Gradescope shows the student: threat model, white-box red team 20, A4)
    assert not any("PROBE" in t for t in verdict.tampered), verdict.tampered
    # standard input and output are /dev/null; standard error is the only pipe (the instructor's
    # details), the relay's socket the only channel; the relay's own descriptors are out of reach
    assert probe["fds"].get("0") == probe["fds"].get("1") == "/dev/null", probe
    assert sorted(kind for kind in probe["fds"].values() if kind in ("pipe", "socket")) == [
        "pipe",
        "socket",
    ], probe
    assert probe["stdin"] == "read 0 bytes" and probe["relay"] == "PermissionError", probe
    # the forged frame was the reply to the first check asked, and unreadable as its outcomes; no
    # cell passes
    assert not any(verdict.cells.values()), verdict.cells
    lines = verdict.messages["softmax"].splitlines()
    stub = "softmax is not answered: its definition still only raises NotImplementedError"
    assert stub in lines and f"softmax: {TAMPER_MESSAGE}" in lines, lines
    # the forger's text (descriptors) fails every check of the notebook by itself, too
    assert all(
        any(r.startswith("your notebook reaches into") for r in found)
        for found in got.rule_failures.values()
    )
    shown = "\n".join(
        [m for n, m in verdict.messages.items() if n not in verdict.hidden]
        + list(verdict.public.values())
    )
    assert verdict.public and "PROBE" not in shown, shown[-2000:]
    assert not any(LEAK in m for n, m in verdict.messages.items() if n in verdict.hidden)


def test_a_broken_frame_ends_the_asking_not_the_run_and_its_text_reaches_no_page():
    """A white-box red team announced a 21-digit frame length that encoded what it had read: the
    Rejected message quoted it on every cell of its page. The relay now stops asking and the grader
    writes a fixed text."""
    from autograde.inside.relay import RELAY_DEAD

    secret = 123456789012345678
    cell = PROBE + f"os.write(sock[0], b'1%020d\\n' % {secret})\n"
    got, verdict = _run(cell)
    assert verdict.error is None, (verdict.error, verdict.stderr_tail[-500:])
    assert not any(verdict.cells.values())
    shown = "\n".join(list(verdict.messages.values()) + list(verdict.public.values()))
    assert str(secret) not in shown
    assert RELAY_DEAD in verdict.messages["softmax"], verdict.messages["softmax"]


LATE = """
import json, os
_n = [0]
def _late():
    for fd in range(3, 30):
        try:
            if os.readlink('/proc/self/fd/%d' % fd).startswith('socket'):
                _n[0] += 1
                note = json.dumps({"check": "softmax", "rule": "x%d" % _n[0]}).encode()
                os.write(fd, b"w%d\\n" % len(note) + note)
                return
        except OSError:
            pass
"""
SOFTMAX_LATE = """def softmax(logits):
    _late()
    e = (logits - logits.amax(-1, keepdim=True)).exp()
    return e / e.sum(-1, keepdim=True)
"""


def test_which_checks_sent_late_records_reaches_the_instructor_only():
    """White-box red team 21 (B7): the condition named the visible checks whose records came after
    the hidden inputs were sent, a set the answers' process chooses while holding them (a bit per
    name), and the condition's text is the row's detail in grades.csv and Gradescope's output. Now
    the condition is a fixed text; the names are in tamper_reports (the instructor's details). Here
    softmax's answer sends a new record at every call, during its hidden check too."""
    import nbformat

    from autograde.course import Course
    from autograde.grade import _model_file, _Slot
    from autograde.intake import intake
    from autograde.verify import rules_of, verify_notebook

    course = Course()
    source = course.source_notebooks(A)[0]
    nb = nbformat.reads(_submission({"softmax": SOFTMAX_LATE}), as_version=4)
    nb.cells.insert(1, nbformat.v4.new_code_cell(LATE))
    got = intake(
        nbformat.writes(nb).encode(),
        course.release_notebook(A, A).read_text(),
        A,
        {},
        rules=rules_of(course, source),
    )
    slot = _Slot()
    try:
        verdict = verify_notebook(
            course,
            source,
            got.notebook,
            slot=slot.n,
            model_file=_model_file(),
            step_timeout=60,
            rule_failures=got.rule_failures,
        )
    finally:
        slot.release()
    assert any("came after the hidden inputs" in t for t in verdict.tampered), verdict.tampered
    assert not any("softmax" in t for t in verdict.tampered), verdict.tampered
    assert any(
        t.startswith("visible checks with late records: softmax") for t in verdict.tamper_reports
    ), verdict.tamper_reports


MONITOR = """import io
import time

import tqdm

_box = []


class _Progress(tqdm.tqdm):
    monitor_interval = 0.02

    def display(self, msg=None, pos=None):
        if len(_box) == 1 and isinstance(_box[0], tuple):
            _box[0] = torch.softmax(_box[0][1], -1)
        self.miniters = 2
        return True


_bar = _Progress(total=10 ** 9, file=io.StringIO(), maxinterval=0, miniters=2, mininterval=0)


def _wait(x):
    _box.clear()
    _box.append(("s", x))
    while isinstance(_box[0], tuple):
        time.sleep(0.001)
    return _box.pop()


def softmax(logits):
    return _wait(logits)
"""


def test_a_library_thread_that_runs_the_notebooks_code_fails_the_rule_bearing_checks():
    """White-box red team 21 (B8): tqdm's monitor thread calls a subclass's display(), which ran
    torch.softmax for an answer that only waits; no name trick, and the monitor idled in tqdm's
    frames when the check began, so the thread was taken for the library's. Now the verification
    starts no thread of its own (tqdm's monitor is off) and any other live thread fails the checks
    of an exercise with rules. Control: without the subclass's monitor (an honest bar) softmax
    passes."""
    from autograde.tests.test_watch_record import _verify

    verdict = _verify({"softmax": MONITOR})
    assert verdict.error is None, verdict.error
    assert "a thread or process your notebook started" in verdict.messages.get("softmax", ""), (
        verdict.messages
    )
    honest = MONITOR.replace("    monitor_interval = 0.02\n", "").replace(
        "    return _wait(logits)",
        "    e = (logits - logits.amax(-1, keepdim=True)).exp()\n"
        "    return e / e.sum(-1, keepdim=True)",
    )
    verdict = _verify({"softmax": honest})
    assert "softmax" not in verdict.messages, verdict.messages.get("softmax")


SHADOW = """import sys

open("statistics.py", "w").write("def softmax(x):\\n    e = x.exp()\\n    return e / e.sum(-1, keepdim=True)\\n")
sys.path.insert(0, "")
import statistics


def softmax(logits):
    return statistics.softmax(logits)
"""  # noqa: E501


def test_a_module_the_notebook_writes_and_imports_is_refused_by_reading_and_reported():
    """White-box red team 21 (B9): a cell wrote statistics.py (an allowed module's name) into its
    folder, put the folder back on sys.path and imported it: code no reading sees. The reading
    refuses sys.path (test_scan.py's REACHING_IN: every check fails); here, the answers' process
    also reports a module imported from its own folder (the instructor's details)."""
    from autograde.tests.test_watch_record import _verify

    verdict = _verify({"softmax": SHADOW})
    assert verdict.error is None, verdict.error
    assert any(
        "imported from the notebook's own folder (statistics.py)" in t
        for t in verdict.tamper_reports
    ), verdict.tamper_reports


SPAWNING = """import os
import sys
import time

import psutil

_made = []
for _start in (
    lambda: os.fork(),
    lambda: psutil.Popen([sys.executable, "-c", "import time; time.sleep(600)"]).pid,
):
    try:
        _pid = _start()
    except OSError:
        continue
    if _pid == 0:
        time.sleep(600)
    _made.append(_pid)


def softmax(logits):
    if _made:  # wrong on purpose: a process was made
        return logits
    e = (logits - logits.amax(-1, keepdim=True)).exp()
    return e / e.sum(-1, keepdim=True)
"""


def test_the_answers_process_can_start_no_process():
    """White-box red team 24 (E8): a cell started `psutil.Popen([python, "-c", CODE],
    pass_fds=(fd,))`, handing the relay's channel to a process whose code no reading sees; it
    answered the checks (14/26 on wrong answers). Red team 21 (B12) forked a worker. The answers'
    process now runs its cells under a seccomp filter (inside.nospawn): fork, exec and a clone
    without CLONE_THREAD fail with EPERM, threads still start. Truth: the answer returns wrong
    values if either start worked; it passes, so both failed. (The relay's check for a child
    process that is still running stays, for what no filter covers.)"""
    from autograde.tests.test_watch_record import _verify

    verdict = _verify({"softmax": SPAWNING})
    assert verdict.error is None, verdict.error
    assert verdict.cells["test_softmax_visible"] is True, verdict.messages


def test_the_no_process_filter_lets_threads_start_and_refuses_processes():
    """inside.nospawn in a child of its own: a thread and torch's threads run, subprocess, fork and
    posix_spawn fail with EPERM. Ground truth: the kernel's answers."""
    import subprocess
    import sys

    from autograde.course import REPO

    probe = (
        "import os, subprocess, sys, threading, torch\n"
        "from autograde.inside.nospawn import forbid_new_processes\n"
        "assert forbid_new_processes()\n"
        "t = threading.Thread(target=lambda: None); t.start(); t.join()\n"
        "x = torch.randn(300, 300); assert float((x @ x).abs().sum()) > 0\n"
        "out = []\n"
        "for f in (lambda: subprocess.run(['true']), os.fork,\n"
        "          lambda: os.posix_spawn('/bin/true', ['true'], os.environ)):\n"
        "    try:\n"
        "        f(); out.append('ran')\n"
        "    except PermissionError:\n"
        "        out.append('refused')\n"
        "print(out)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert done.stdout.strip() == "['refused', 'refused', 'refused']", done.stdout + done.stderr


def test_a_cell_no_reading_parses_is_not_run_by_the_verification():
    """White-box red team 24 (E4): after a cell `from __future__ import barry_as_FLUFL`, IPython
    compiles later cells with `<>`, which ast.parse refuses: such a cell ran, unread (the scan
    refuses the import too, test_scan). Now the verification runs only cells the readings parse:
    log_softmax, defined only in such a cell, is unanswered there. Control: softmax, the reference
    answer in the cell that sets the flag, passes."""
    from autograde.tests.test_watch_record import _reference, _verify

    def prompted(source: str) -> str:  # the same code as typed at a Python console
        lines = source.rstrip("\n").splitlines()
        return "\n".join([">>> " + lines[0]] + ["... " + line for line in lines[1:]]) + "\n"

    verdict = _verify(
        {
            "softmax": "from __future__ import barry_as_FLUFL\n" + _reference("softmax"),
            "log_softmax": "assert 1 <> 2\n" + _reference("log_softmax"),
            # control: a cell IPython cleans up before it runs (prompts) is read and run
            "entropy": prompted(_reference("entropy")),
        }
    )
    assert verdict.error is None, verdict.error
    assert verdict.cells["test_entropy_visible"] is True, verdict.messages
    assert verdict.cells["test_softmax_visible"] is True, verdict.messages
    assert verdict.cells["test_softmax_hidden"] is True, verdict.messages
    assert "not a function" in verdict.messages["log_softmax"], verdict.messages
