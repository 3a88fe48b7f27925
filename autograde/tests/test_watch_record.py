"""What the checks observe in the answer's process reaches the grader even when the answer tampers
with it.

The out-of-kernel verification runs the answers in a sandboxed child, in the same process as the
checks' watch (course_lib.checks.trace): code in the notebook can reach the watch's objects and the
checks' modules. Three guarantees hold by construction there, each tested on 02's softmax exercises
(a forbidden kernel called through a computed name, which the reading of the text cannot name):

- a broken rule leaves the child the moment the watch sees it (a boundary side record), so emptying
the watch's
  record afterwards (by walking frames, as a blind red team did) takes nothing back: the check
  fails, the row is flagged as having emptied it;
- the checks' modules are sealed before any cell runs (module names, functions' code, defaults and
closures,
  class attributes): a cell that rebinds ``engine._watch`` fails every check and is flagged;
- a function's code swapped and put back within one call is seen by an audit hook as it happens;
- the line counter of the cost checks tells the grader as a call passes 2^10 lines and each doubling
after, so
  setting it back at the end of the call (05's n-gram ban, a loop over the vocabulary) changes
  nothing.

What stays open, written in docs/threat-model.md: a class attribute swapped and put back within one
call, or the watch's own attributes changed, needs the watch's objects or the checks' modules by
name, which the static scan flags (test_scan.py); no in-process observation is proof against code
with the whole process at hand. Needs bubblewrap (the verification's sandbox); ~40 s.
"""

from __future__ import annotations

import json
import os

import nbformat
import pytest

from autograde import sandbox
from autograde.course import REPO, Course, nbg

pytestmark = pytest.mark.skipif(
    sandbox.unavailable() is not None or os.geteuid() != 0,
    reason=f"needs root and bubblewrap: {sandbox.unavailable()}",
)
A = "02_logits_softmax"
COMPUTED = (
    "import torch\n_f = getattr(torch.Tensor, 'soft' + 'max')\n_g = getattr(torch.Tensor, "
    "'log_' + 'soft' + 'max')\n"
)
SCRUB = (
    "def _scrub():\n"
    "    import sys\n"
    "    f = sys._getframe(1)\n"
    "    while f is not None:\n"
    "        for v in list(f.f_locals.values()):\n"
    "            if type(v).__name__ == 'Watch':\n"
    "                for a in vars(v).values():\n"
    "                    if isinstance(a, (set, list, dict)):\n"
    "                        a.clear()\n"
    "        f = f.f_back\n"
)


def _submission(answers: dict[str, str], assignment: str = A) -> str:
    nb = nbformat.read(str(REPO / "notebooks" / assignment / f"{assignment}.ipynb"), as_version=4)
    for cell in nb.cells:
        gid = nbg(cell).get("grade_id")
        if gid in answers:
            cell.source = answers[gid]
    return nbformat.writes(nb)


def _verify(answers: dict[str, str], assignment: str = A):
    from autograde.grade import _model_file, _Slot
    from autograde.verify import verify_notebook

    course = Course()
    slot = _Slot()
    try:
        return verify_notebook(
            course,
            course.source_notebooks(assignment)[0],
            _submission(answers, assignment),
            slot=slot.n,
            model_file=_model_file(),
            step_timeout=60,
        )
    finally:
        slot.release()


def _reference(name: str, assignment: str = A) -> str:
    nb = nbformat.read(str(REPO / "solutions" / assignment / f"{assignment}.ipynb"), as_version=4)
    return next(c.source for c in nb.cells if nbg(c).get("grade_id") == name)


def test_a_scrubbed_record_and_a_swapped_code_object_still_fail_and_flag():
    verdict = _verify(
        {
            # the forbidden kernel, then the watch's record emptied from the caller's frames
            "softmax": COMPUTED
            + SCRUB
            + "def softmax(logits):\n    r = _f(logits, -1)\n    _scrub()\n    return r\n",
            # the watch's way of recording swapped for a no-op around the forbidden call, then put
            # back
            "log_softmax": (
                "from course_lib.checks import trace as _t\n"
                "def log_softmax(logits):\n"
                "    saved = _t.Watch.saw.__code__\n"
                "    _t.Watch.saw.__code__ = (lambda self, rule: None).__code__\n"
                "    try:\n        return _g(logits, -1)\n"
                "    finally:\n        _t.Watch.saw.__code__ = saved\n"
            ),
        }
    )
    assert verdict.error is None, verdict.error
    assert (
        not verdict.cells["test_softmax_visible"] and not verdict.cells["test_log_softmax_visible"]
    )
    assert "torch's softmax kernel, which this exercise asks" in verdict.messages["softmax"], (
        verdict.messages["softmax"]
    )
    # which check's record was emptied is the process's choice: named to the instructor only (threat
    # model, white-box red team 21, B7)
    assert (
        "the record of what an answer ran was emptied from inside its process (which checks: the "
        "record's "
        "tamper_reports)" in verdict.tampered
    ), verdict.tampered
    assert any(t.startswith("softmax: sent out as it happened") for t in verdict.tamper_reports), (
        verdict.tamper_reports
    )
    assert any("a function's code was replaced (Watch.saw)" in t for t in verdict.tamper_reports), (
        verdict.tamper_reports
    )
    assert "changed the checks' own code or state" in verdict.messages["log_softmax"]


def test_a_cell_that_rebinds_the_checks_fails_every_check_and_an_honest_one_is_untouched():
    patched = _verify(
        {
            "softmax": (
                "import course_lib.checks.engine as _E\n_E._watch = lambda *a, **k: None\n"
                + COMPUTED
                + "def softmax(logits):\n    return _f(logits, -1)\n"
            ),
            "log_softmax": _reference("log_softmax"),
        }
    )
    assert not any(patched.cells.values()), patched.cells
    assert any("course_lib.checks.engine._watch" in t for t in patched.tamper_reports), (
        patched.tamper_reports
    )
    # control: the same notebook with the references' answers, through the same child, seals and all
    honest = _verify({"softmax": _reference("softmax"), "log_softmax": _reference("log_softmax")})
    assert honest.tampered == [] and honest.error is None, (honest.tampered, honest.error)
    assert honest.cells["test_softmax_visible"] and honest.cells["test_log_softmax_visible"], (
        honest.messages
    )
    assert json.dumps(honest.messages).count("changed the checks") == 0


def test_a_line_count_set_back_inside_the_call_still_fails_the_cost_check():
    reference = _reference("ban_repeated_ngrams", "05_debugging_generation")
    looped = (
        reference + "\n_ban = ban_repeated_ngrams\n"
        "def ban_repeated_ngrams(logits, ids, n):\n"
        "    for _ in range(logits.shape[-1]):  # a loop over the vocabulary, which the text "
        "rules out\n"
        "        pass\n"
        "    out = _ban(logits, ids, n)\n"
        "    import sys\n"
        "    sys.gettrace().__self__.steps = 3  # the counter's own object, set back\n"
        "    return out\n"
    )
    verdict = _verify({"ban_repeated_ngrams": looped}, "05_debugging_generation")
    assert verdict.error is None, verdict.error
    failed = [g for g, ok in verdict.cells.items() if not ok]
    assert any("ban" in g for g in failed), verdict.cells
    assert any(
        "Python lines counted in case 'cost: V = 4096" in t for t in verdict.tamper_reports
    ), verdict.tamper_reports
