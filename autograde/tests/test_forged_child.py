"""A notebook cell that speaks for the verification child: what it can and cannot buy (issue 37).

A white-box red team (it had read autograde/) left every answer as the template's stub and, from a top-level
cell running inside the verification child, wrote the visible outcomes frame itself, read the hidden payloads
from standard input and wrote the second frame: 19/20 on 02, `graded`, unflagged. The child runs student code,
so what it sends is the student's word. The grader now decides from what it reads itself:

- an exercise whose answer is still the stub scores nothing from verification, whatever values its process
  sends (the submission's text, read outside: `course_lib.checks.rules.answer_is_stub` in autograde.intake);
- rule names, tamper reports and other text from that process reach a hidden check's page only as texts the
  grader wrote (`verify._public`, `verify._known_rules`); anything else goes to the instructor's flags;
- a visible check counts only records that came before the hidden inputs were sent.

The replay below forges the values with the reference solution (so they are right): the check's own result
passes, and the stub reading alone fails the cell, which proves both the forgery and the defence. Root and
bubblewrap (the real verification sandbox); ~20 s.
"""

from __future__ import annotations

import os

import pytest

from autograde import sandbox
from autograde.tests.test_watch_record import A, _submission

pytestmark = pytest.mark.skipif(sandbox.unavailable() is not None or os.geteuid() != 0,
                                reason=f"needs root and bubblewrap: {sandbox.unavailable()}")

LEAK = "LEAKED-HIDDEN-INPUT"
# The forger: finds the child's job and its framed output in its frames, answers softmax's checks
# with a correct softmax and every other check with an error, reads the hidden inputs, answers them the same way
# with forged rule names, tamper and step records that carry what it read, then waits to be killed.
FORGER = f"LEAK = {LEAK!r}\n" + '''
import json, os, sys, time
import torch
from course_lib.checks.engine import Outcome, decode

def _soft(x):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    return e / e.sum(dim=-1, keepdim=True)

def _answer(payloads, leak=""):
    out = {}
    for name, info in payloads.items():
        cases = json.loads(info["payload"])["cases"]
        rows = []
        for c in cases:
            if info["exercise"] == "softmax":
                value = _soft(*decode(c["args"]))
                value = [value] * c["repeat"] if c["repeat"] > 1 else value
                o = Outcome(c["label"], value=value, forbidden=[leak] if leak else [])
                rows.append(o.to_json())
            else:
                rows.append({"label": c["label"], "error": "no", "mutated": []})
        out[name] = json.dumps(rows)
    return out

def _frame(fd, data, side=False):
    data = json.dumps(data).encode()
    os.write(fd, (b"w" if side else b"") + b"%d\\n" % len(data) + data)

def _forge():
    f = sys._getframe()
    while f is not None and "job" not in f.f_locals:
        f = f.f_back
    job, fd = f.f_locals["job"], f.f_locals["out_fd"]
    _frame(fd, _answer(job["payloads"]))
    head = b""
    while not head.endswith(b"\\n"):
        head += os.read(0, 1)
    data = b""
    while len(data) < int(head):
        data += os.read(0, int(head) - len(data))
    hidden = json.loads(data)["payloads"]
    secret = "%s %s" % (LEAK, sorted(hidden)[0])
    for name in hidden:
        _frame(fd, {"check": name, "rule": secret}, side=True)
    _frame(fd, {"check": "*", "rule": secret}, side=True)
    _frame(fd, {"check": "softmax", "rule": secret}, side=True)
    _frame(fd, _answer(hidden, secret))
    time.sleep(60)

_forge()
'''


def test_a_cell_that_forges_the_childs_frames_gets_nothing_for_an_unanswered_exercise():
    from autograde.course import Course
    from autograde.grade import _model_file, _Slot
    from autograde.intake import intake
    from autograde.verify import TAMPER_MESSAGE, rules_of, verify_notebook
    import nbformat

    course = Course()
    source = course.source_notebooks(A)[0]
    # the answer cell keeps the stub; the forger sits in a cell of its own, as the red team's did
    nb = nbformat.reads(_submission({}), as_version=4)
    nb.cells.insert(1, nbformat.v4.new_code_cell(FORGER))
    notebook = nbformat.writes(nb)
    got = intake(notebook.encode(), course.release_notebook(A, A).read_text(), A, {}, rules=rules_of(course, source))
    assert got.status == "ok", got.detail
    slot = _Slot()
    try:
        verdict = verify_notebook(course, source, got.notebook, slot=slot.n, model_file=_model_file(),
                                  step_timeout=60, rule_failures=got.rule_failures)
    finally:
        slot.release()
    assert verdict.error is None, (verdict.error, verdict.stderr_tail[-500:])
    softmax_cells = [g for g, names in verdict.checks_of.items() if "softmax" in names]
    assert softmax_cells and not any(verdict.cells[g] for g in softmax_cells)
    stub = "softmax is not answered: its definition still only raises NotImplementedError"
    # the forged values were right: the check's own result passed, and what fails it is the reading of the text
    # (and the forger's own tamper record, which only ever lowers)
    lines = verdict.messages["softmax"].splitlines()
    assert not any("cases failed" in line for line in lines), lines
    assert stub in lines and f"softmax: {TAMPER_MESSAGE}" in lines, lines
    # and the forger's own text (frames, descriptors) fails every check of the notebook by itself
    reaching = [line for line in lines if line.startswith("your notebook reaches into the process that checks it")]
    assert reaching and "file descriptors" in reaching[0] and "frames" in reaching[0], lines
    assert all(any(r.startswith("your notebook reaches into") for r in got) for got in got.rule_failures.values())
    assert not any(verdict.cells.values())  # nothing else was answered either
    # nothing the process wrote after it held the hidden inputs reaches a page the student reads
    shown = "\n".join([m for n, m in verdict.messages.items() if n not in verdict.hidden]
                      + list(verdict.public.values()))
    assert LEAK not in shown and verdict.public, shown[-2000:]
    assert any(LEAK in t for t in verdict.tampered)  # the instructor sees what was withheld



def test_a_length_announced_after_the_hidden_inputs_reaches_no_page():
    """A white-box red team read the hidden inputs, then announced a 21-digit frame length that encoded them:
    the Rejected message quoted it on every cell of its page. The page now names the kind of failure only."""
    from autograde.course import Course
    from autograde.grade import _model_file, _Slot
    from autograde.verify import verify_notebook
    import nbformat

    secret = 123456789012345678
    forger = FORGER.replace("    _frame(fd, _answer(hidden, secret))\n",
                            f"    os.write(fd, b'1%020d\\n' % {secret})\n")
    assert forger != FORGER
    course = Course()
    nb = nbformat.reads(_submission({}), as_version=4)
    nb.cells.insert(1, nbformat.v4.new_code_cell(forger))
    slot = _Slot()
    try:
        verdict = verify_notebook(course, course.source_notebooks(A)[0], nbformat.writes(nb), slot=slot.n,
                                  model_file=_model_file(), step_timeout=60)
    finally:
        slot.release()
    assert verdict.error == "the verification output broke its format, so its results cannot be read"
    assert str(secret) in verdict.stderr_tail  # the instructor's details keep what happened
    assert not any(verdict.cells.values())
