"""Verification outside the student's kernel: run the student's answers again in a fresh sandbox,
judge here.

nbgrader runs a student's code and the tests in one kernel, so code that patches `np.allclose`,
installs an input transformer or rewrites `assert` can pass anything there. Here the tests are data
(course_lib.checks), so the harness can check every autograded cell a second time without trusting
the kernel:

1. child (sandboxed, `python -m autograde.inside.relay child`, its job framed on standard input; the
code is
   autograde/inside/relay.py): run the student's own code cells (not test cells, not `demo` cells)
   in a private IPython shell, call each exercise's function on the encoded inputs of its checks,
   write the outcomes as tagged JSON (never pickle). It sees no references, no solutions, no
   gradebook; the hidden checks' inputs reach it only after it has sent the visible checks' outcomes
   (whose messages the student sees), in a second round;
2. parent (trusted, this process): decode the outcomes, compare them with the expected values
(visible
   checks' own, hidden checks' stored references) using each check's comparator.

A cell passes out of the kernel when every check its test code calls passes here. The harness then
scores each cell with the lower of the in-kernel and out-of-kernel results and flags disagreements
for review.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograde import boundary, sandbox
from autograde.course import REPO, Course, check_calls, read_notebook
from autograde.inside import RELAY

# a side record's check name: the notebook changed the checks themselves
from autograde.inside.wire import TAMPERED

OUTCOME_LIMIT = boundary.FRAME_CAP  # bytes of outcomes JSON we are willing to read back


@dataclass
class Verdict:
    """Out-of-kernel result of one notebook: per graded cell, did every check pass, and why not."""

    cells: dict[str, bool] = field(default_factory=dict)  # grade_id -> all its checks passed
    messages: dict[str, str] = field(default_factory=dict)  # check name -> failure message
    error: str | None = None  # the child could not run at all (then every cell counts as failed)
    # the child's last words when it failed: the instructor's details only (a student could print
    # what its answers saw of the hidden cases there, then exit)
    stderr_tail: str = ""
    seconds: float = 0.0
    # grade_id -> names of the checks it calls
    checks_of: dict[str, list[str]] = field(default_factory=dict)
    # names of the hidden checks among them (never run in the kernel)
    hidden: set[str] = field(default_factory=set)
    memory_limit: bool = False  # its processes together reached the memory limit
    memory_enforced_by: str | None = None  # what held that limit (sandbox.MemoryGroup.enforced_by)
    # visible check -> its twin's full message (the instructor's details only: it shows hidden
    # inputs)
    twin_failures: dict[str, str] = field(default_factory=dict)
    # the answers changed what the checks observe: for a flag, in the grader's words only (a row's
    # detail can reach the student: Gradescope shows it)
    tampered: list[str] = field(default_factory=list)
    # what the answers' process itself said about it: the instructor's details only (it can carry
    # hidden inputs)
    tamper_reports: list[str] = field(default_factory=list)
    # hidden check -> its failure as the student may read it, built here from the check's own text
    # alone
    public: dict[str, str] = field(default_factory=dict)


_PAYLOADS: dict[tuple, tuple[dict, dict]] = {}


def _payloads_of(course: Course, source: Path) -> tuple[dict, dict]:
    """_payloads of an instructor notebook, built once per process (the same for every student: ~1-3
    s of case building, model calls included, that every grading repeated)."""
    st = source.stat()
    key = (
        str(source),
        st.st_mtime_ns,
        st.st_size,
        course.visible_package,
        course.hidden_package,
        tuple(str(p) for p in course.path_entries()),
    )
    if key not in _PAYLOADS:
        _PAYLOADS[key] = _payloads(course, read_notebook(source))
    return _PAYLOADS[key]


def _payloads(course: Course, source_nb) -> tuple[dict, dict]:
    """{check name: (exercise, payload json)} for every check the notebook's test cells call; and
    cell -> names."""
    from autograde.inside.codec import encode_cases

    visible, hidden = course.visible_registry(), course.hidden_registry()
    calls = [
        (grade_id, kind, name, (hidden if kind == "hidden_check" else visible).get(name))
        for grade_id, kind, name in check_calls(source_nb)
    ]
    # a rule belongs to the exercise, not to one of its checks: every check of an exercise watches
    # and reads for the rules any of them names (otherwise a hidden check that names no rule pays an
    # answer its visible check refuses)
    forbidden: dict[str, list[str]] = {}
    ops: dict[str, list[str]] = {}
    for _, _, _, chk in calls:
        forbidden[chk.exercise] = list(
            dict.fromkeys([*forbidden.get(chk.exercise, []), *chk.forbidden])
        )
        ops[chk.exercise] = sorted({*ops.get(chk.exercise, []), *chk.forbidden_ops})
    payloads: dict[str, dict] = {}
    cells: dict[str, list] = {}
    for grade_id, kind, name, chk in calls:
        payloads[name] = {
            "exercise": chk.exercise,
            "payload": encode_cases(
                chk.cases(), chk.allow_mutation, forbidden[chk.exercise], ops[chk.exercise]
            ),
            "kind": kind,
            "forbidden": forbidden[chk.exercise],
        }
        cells.setdefault(grade_id, []).append(name)
    # Twins (autograde/hidden/_twins.py): a visible check's cases in disguise, run with the hidden
    # checks; a visible check passes outside the kernel only if its twin passes too, so public
    # expected values typed in or looked up earn nothing. (Imported here: the verification child,
    # which imports this module, has no autograde.hidden.)
    from autograde.hidden._twins import twins_of

    for twin, twin_of in twins_of(hidden, [call[:3] for call in calls]).items():
        chk = hidden.get(twin)
        payloads[twin] = {
            "exercise": chk.exercise,
            "twin_of": twin_of,
            "kind": "twin",
            "payload": encode_cases(
                chk.cases(), chk.allow_mutation, forbidden[chk.exercise], ops[chk.exercise]
            ),
            "forbidden": forbidden[chk.exercise],
        }
    return payloads, cells


def rules_of(course: Course, source: Path) -> dict[str, tuple[str, list[str]]]:
    """{check name: (exercise, forbidden calls)} for the checks of an instructor notebook:
    autograde.intake reads the submission's text for them (never the kernel's word). Every answer
    also may not use the course's checks (``<visible package>.*``): their cases and expected values
    are no answer (a red team's lookup of the visible cases got their points)."""
    payloads, _ = _payloads_of(course, Path(source))
    return {
        n: (p["exercise"], p["forbidden"] + [f"{course.visible_package}.*"])
        for n, p in payloads.items()
        if p["kind"] != "twin"
    }


def _unreadable(result) -> bool:
    """Whether a check's outcomes were rejected at the boundary (``_judge``'s one failure labelled
    ``*``)."""
    return bool(result) and any(
        case == "*" and msg.startswith("unreadable outcomes") for case, msg in result.failures
    )


UNKNOWN_RULE = (
    "a routine this exercise asks you not to use (its name, as the answer's process "
    "wrote it, is withheld)"
)


def _known_rules(
    said: set[str] | frozenset[str], allowed: frozenset[str], odd: set[str]
) -> set[str]:
    """The rules a process said were broken, as texts the grader wrote itself: a name outside the
    check's own list becomes UNKNOWN_RULE (it still fails the check) and goes to ``odd``, for the
    instructor's flag only: a forged record could carry any text, hidden inputs included, to the
    student's page."""
    odd |= set(said) - allowed
    return {r if r in allowed else UNKNOWN_RULE for r in said}


def _judge(
    course: Course,
    name: str,
    kind: str,
    outcomes_json: str,
    streamed: frozenset[str] = frozenset(),
    counted: dict[str, int] | None = None,
    forbidden: list[str] | None = None,
):
    """(the check's result, what its outcomes left out of the side records, rule texts outside its
    list). ``streamed``: the rules its watch sent as it saw them broken; ``counted``: per case,
    lines its counted call had run when last told (a lower bound). Both count whatever the outcomes
    say: the answer shared the process in which they were written. ``forbidden``: the exercise's
    rules, the only rule texts passed on."""
    from course_lib.checks.engine import CheckResult, judge
    from course_lib.checks.trace import rule_names

    secret = kind in ("hidden_check", "twin")
    registry = course.hidden_registry() if secret else course.visible_registry()
    chk = registry.get(name)
    cases = chk.cases()
    try:
        outcomes = boundary.decode_outcomes(outcomes_json, len(cases), limit=OUTCOME_LIMIT)
    except boundary.Rejected as e:
        return CheckResult(name, len(cases), [("*", f"unreadable outcomes: {e}")]), set(), set()
    if len(outcomes) == 1 and outcomes[0].label == "*" and outcomes[0].error and len(cases) != 1:
        # the check as a whole: its calls ran over the time limit, or the relay could not ask it
        # (RELAY_DEAD)
        return (
            CheckResult(name, len(cases), [("*", outcomes[0].error[:300])], chk.hint),
            set(),
            set(),
        )
    missing = set(streamed) - {r for o in outcomes for r in o.forbidden}
    allowed, odd = rule_names(forbidden or []), set[str]()
    for o in outcomes:
        o.forbidden = sorted(_known_rules(set(o.forbidden) | streamed, allowed, odd))
        floor = (counted or {}).get(o.label[:100])  # the child sends a label cut to 100 characters
        if floor is not None and o.error is None and o.steps != -2 and o.steps < floor:
            missing.add(f"{floor:,} Python lines counted in case {o.label!r}, {o.steps:,} reported")
            o.steps = floor
    expected = registry.expected_values(name, cases) if secret else [c.expected for c in cases]
    try:
        return judge(chk, cases, outcomes, expected), missing, odd
    except Exception as e:  # noqa: BLE001 - a value built to break a comparator fails its own check only
        why = f"could not compare the results: {type(e).__name__}: {e}"[:300]
        return CheckResult(name, len(cases), [("*", why)]), missing, odd


TAMPER_MESSAGE = (
    "your notebook changed the checks' own code or state: its results cannot be trusted"
)


def _public(result, broken: list[str]) -> str:
    """A hidden check's failure as the student may read it, from text the grader wrote alone: that
    it failed (not which cases or how many: a number the answer controls is a channel), that a rule
    was broken (one bit), the reading of the student's own text (``broken``), the hint.
    Nothing the answers' process wrote (case messages, labels, values, which rules it reported) is
    quoted."""
    labels = [label for label, _ in result.failures]
    parts = (
        [f"failed on some of its {result.n_cases} cases"]
        if any(label != "rules" for label in labels)
        else []
    ) + (["the answer breaks a rule of the exercise"] if "rules" in labels else [])
    lines = (
        [
            f"{result.name}: {', and '.join(parts)} (a hidden check shows neither which cases nor "
            "how many)"
        ]
        if parts
        else []
    )
    # which rules the process said its answer broke stays off the page: a set of names from the
    # check's own list is a number the process chooses (a white-box red team wrote 64 bits of a
    # hidden input as 64 rule names); the reading of the student's own text (``broken``) names them
    lines += broken
    if result.hint:
        lines.append(f"Hint: {result.hint}")
    return "\n".join(lines)


# informative hidden cases needed before their results say anything about an answer
MEMORISED_MIN_CASES = 3
# an answer passing fewer of them than this did not compute what its visible cases show
MEMORISED_SHARE = 1 / 3


def _null_answers() -> list:
    """Answers that compute nothing: the input back, zeros, ones, the argmax, a constant, an error.
    A hidden case one of them passes (a filter that keeps everything, a must-raise case) shows
    nothing about an answer."""
    import torch

    def first(args):
        return args[0] if args else None

    def like(f):
        return lambda *a, **k: f(first(a)) if isinstance(first(a), torch.Tensor) else None

    def batch_zeros(*a, **k):
        x = first(a)
        return (
            torch.zeros(x.shape[:-1], dtype=torch.long)
            if isinstance(x, torch.Tensor) and x.dim()
            else None
        )

    def raising(exc):
        def null(*a, **k):
            raise exc("null answer")

        return null

    constants: list = [None, 0, 1, -1, 0.0, 1.0, True, False, (0, 0), [], ""]

    # the input back, as a new object (a step must not return its input itself)
    def copied(*a, **k):
        x = first(a)
        return x.clone() if isinstance(x, torch.Tensor) else copy.deepcopy(x)

    return [
        lambda *a, **k: first(a),
        copied,
        like(torch.zeros_like),
        like(torch.ones_like),
        batch_zeros,
        like(lambda x: x.argmax(dim=-1) if x.dim() else x),
        like(lambda x: torch.full_like(x, -math.inf)),
        raising(ValueError),
        raising(TypeError),
    ] + [(lambda c: lambda *a, **k: c)(c) for c in constants]


@functools.lru_cache(maxsize=256)
def trivial_cases(course: Course, name: str) -> tuple[frozenset[str], frozenset[str]]:
    """(labels of a hidden check's cases, those of them some null answer passes), computed here
    (trusted)."""
    from course_lib.checks.engine import judge, run_cases

    registry = course.hidden_registry()
    chk = registry.get(name)
    cases = chk.cases()
    expected = registry.expected_values(name, cases)
    labels = frozenset(c.label for c in cases)
    passed: set[str] = set()
    for null in _null_answers():
        failed = {
            label for label, _ in judge(chk, cases, run_cases(chk, null, cases), expected).failures
        }
        if "*" not in failed:
            passed |= labels - failed
    return labels, frozenset(passed)


def memorised(payloads: dict, judged: dict, cases_of=None) -> dict[str, str]:
    """{visible check name: message} for visible checks passed by an answer that passes less than
    MEMORISED_SHARE of its exercise's informative hidden cases (those no null answer passes): the
    visible inputs are public, so outputs typed in for them (a lookup table, or values read at run
    time) pass; other inputs are what show an answer computes. The check then fails outside the
    kernel while it passed inside, so the row is flagged for a look (an instructor can give the
    points back). cases_of(name) -> (labels, trivially passed labels) of a hidden check
    (``trivial_cases``); without it, every case counts as informative."""

    def tally(name: str, result) -> tuple[int, int]:
        """(informative cases, of them passed) of one hidden check."""
        failed = {label for label, _ in result.failures}
        labels, trivial = cases_of(name) if cases_of is not None else (frozenset(), frozenset())
        n = len(labels - trivial) if cases_of is not None else result.n_cases
        if failed & {"*", "rules"}:
            # the check failed as a whole (unreadable or missing outcomes, a crash, an exception
            # that is not an Exception, a time limit) or broke a rule only on other inputs than the
            # visible ones: every way a lookup can fail hidden cases weighs against its visible
            # points, none is "nothing to say"
            return n, 0
        if cases_of is None:
            return n, n - len(failed)
        return n, len((labels - trivial) - failed)

    hidden_of: dict[str, list] = {}
    for name, info in payloads.items():
        if info["kind"] == "hidden_check" and name in judged:
            hidden_of.setdefault(info["exercise"], []).append(name)
    out = {}
    for name, info in payloads.items():
        hidden = hidden_of.get(info["exercise"], [])
        if (
            info["kind"] != "check"
            or name not in judged
            or not judged[name].passed
            or not hidden
            or all(judged[h].passed for h in hidden)
        ):
            continue
        counts = [tally(h, judged[h]) for h in hidden]
        n, passed = sum(c[0] for c in counts), sum(c[1] for c in counts)
        if n >= MEMORISED_MIN_CASES and passed < MEMORISED_SHARE * n:
            # how many passed is not said: a count the answers' process chooses is a channel out of
            # the hidden cases
            out[name] = (
                f"{name}: its visible cases pass, but the hidden cases of the same exercise "
                "(other inputs) "
                f"almost all fail (fewer than a third of the {n} that an answer computing nothing "
                "cannot pass): points "
                "for the visible cases need an answer that computes, not outputs typed in or "
                "looked up for their inputs"
            )
    return out


def check_package_files(course: Course, package: str) -> list[Path]:
    """The files (a module, or a package's folder) that make up an importable package of the
    course."""
    course.ensure_importable()
    spec = course.package_spec(package)
    if spec is None:
        return []
    if spec.submodule_search_locations:
        return [Path(p) for p in spec.submodule_search_locations]
    return [Path(spec.origin)]


# What of the harness a sandbox sees: the package autograde/inside/ whole (everything that runs
# there, and nothing else: autograde/tests/test_layout.py), and autograde/__init__.py, which `python
# -m autograde.inside.<name>` runs first
SANDBOX_HARNESS = (REPO / "autograde" / "__init__.py", REPO / "autograde" / "inside")


def course_sandbox(course: Course, model_file: Path | None) -> tuple[list[Path], dict[str, str]]:
    """What any sandbox running a course's student code sees: read-only files and folders, and
    environment.

    Least privilege: Python, course_lib, the course's visible checks, the model file, and the
    harness's code that runs inside (autograde/inside/: the runner, the kernel, the verification
    relay). Not the hidden checks, their references, solutions/, the bug zoo, other students, the
    output folder or any gradebook.
    """
    readonly = [REPO / "course_lib", *SANDBOX_HARNESS]
    if course.visible_package.split(".")[0] != "course_lib":
        readonly += check_package_files(course, course.visible_package)
    env = {
        "PYTHONPATH": os.pathsep.join(course.path_entries()),
        "COURSE_GRADING": "1",
        "MPLBACKEND": "Agg",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "PYTHONHASHSEED": "0",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        "IPYTHONDIR": "/tmp/ipython",
        "MPLCONFIGDIR": "/tmp/mpl",
    }
    if model_file is not None:
        readonly.append(model_file)
        env["COURSE_MODEL_FILE"] = str(model_file)
        fp32 = model_fp32_file(model_file)
        # the float32 weights, mapped instead of dequantized (course_lib.weights.fp32_file)
        if fp32 is not None:
            readonly.append(fp32)
            env["COURSE_MODEL_FP32"] = str(fp32)
    return readonly, env


@functools.lru_cache(maxsize=8)
def model_fp32_file(model_file: Path) -> Path | None:
    """The grader's float32 copy of the model file's weights, made here (trusted) the first time; or
    None."""
    from course_lib import weights

    try:
        return weights.ensure_fp32(model_file, weights.sha256_of(model_file))
    except Exception:  # noqa: BLE001 - not the course's model (a fixture): sandboxes dequantize as before
        return None


def verify_notebook(
    course: Course,
    source: Path,
    notebook_json: str,
    *,
    slot: int = 0,
    policy: sandbox.Policy = sandbox.Policy(),
    wall_s: float = 600.0,
    model_file: Path | None = None,
    step_timeout: float = 120.0,
    skip_cells: tuple[int, ...] = (),
    sandboxed: bool = True,
    rule_failures: dict[str, list[str]] | None = None,
) -> Verdict:
    """Run the submission's answers in a fresh sandbox and judge every check of its graded cells
    here.

    notebook_json: the rebuilt submission (autograde.inside.sanitize), sent to the child on its
    standard input. step_timeout: seconds each of the student's cells, and each check's calls, may
    run (as nbgrader's cell timeout), so that one endless loop costs only its own answer.
    skip_cells: indices of cells not to run, as in the kernel (they killed it, or ignored its
    interrupt): a cell that crashes its process would otherwise cost every answer here, not only its
    own. sandboxed: False only for `grade --no-sandbox` (then the child is a plain process with the
    same limits). rule_failures: {check name: messages}: forbidden calls found in the submission's
    text (autograde.intake, from ``rules_of``); each such check fails with those messages, whatever
    its values.

    Why long: one verification is one sandbox and one deadline: both rounds of checks (visible, then
    hidden once the visible outcomes are out) and the reading of what came back share them, and
    splitting it would pass the half-read outcomes between functions that each must trust the
    other's caps.
    """
    t0 = time.perf_counter()
    payloads, cells = _payloads_of(course, Path(source))
    verdict = Verdict(
        cells={g: False for g in cells},
        checks_of=cells,
        hidden={n for n, info in payloads.items() if info["kind"] == "hidden_check"},
    )
    if not payloads:
        return verdict
    readonly, env = course_sandbox(course, model_file)
    env.update(
        {
            "AUTOGRADE_STEP_TIMEOUT": str(int(step_timeout)),
            "AUTOGRADE_SKIP_CELLS": ",".join(str(i) for i in sorted(skip_cells)),
            "AUTOGRADE_CHECK_PACKAGES": ",".join(course.check_packages()),
        }
    )
    argv = [sys.executable, "-m", RELAY, "child"]
    # Two rounds: the visible checks' inputs with the notebook, the hidden checks' only once the
    # visible results are in. A visible check's message reaches the student's page, and nothing the
    # process holds before then (memory an answer can search, not only the inputs it is called with)
    # includes a hidden input.
    visible = {n: info for n, info in payloads.items() if info["kind"] == "check"}
    # hidden checks and twins
    hidden = {n: info for n, info in payloads.items() if info["kind"] != "check"}
    job = boundary.frame(
        json.dumps({"notebook": notebook_json, "payloads": visible, "then": bool(hidden)}).encode()
    )
    then = boundary.frame(json.dumps({"payloads": hidden}).encode()) if hidden else None
    group = None
    if sandboxed:
        cmd, group = sandbox.command(
            argv, readonly=readonly, env=env, policy=policy, slot=slot, name="verify"
        )
        run_env = None
    else:
        cmd = [
            "prlimit",
            f"--as={policy.address_space}",
            f"--cpu={policy.cpu_seconds}",
            "--core=0",
            "--",
            *argv,
        ]
        run_env = {**os.environ, **env}
    try:
        try:
            done = boundary.run(
                cmd,
                job,
                limit=OUTCOME_LIMIT,
                deadline_s=wall_s,
                env=run_env,
                started=group.started if group is not None else None,
                then=then,
            )
        finally:
            verdict.memory_limit = group is not None and group.hit()
            verdict.memory_enforced_by = group.enforced_by if group is not None else None
            if group is not None:
                group.close()
        if done.message is None:
            # the kind of failure in the grader's words; the exit status is the process's to choose
            # (a number on the student's page is a channel), so it goes to the instructor's details
            # with the stderr
            verdict.stderr_tail = f"exit status {done.returncode}\n{done.stderr.strip()[-2000:]}"
            verdict.error = (
                f"out-of-kernel verification ran over {wall_s:.0f} s"
                if done.timed_out
                else "the verification output was over its size limit"
                if done.over_limit
                else "the verification process exited before sending its results"
            )
            verdict.seconds = time.perf_counter() - t0
            return verdict
        results = boundary.check_outcomes(
            done.message, set(hidden) if then else set(visible), limit=OUTCOME_LIMIT
        )
        if then:
            # boundary.run reads the second message only after the first
            assert done.first is not None
            results.update(boundary.check_outcomes(done.first, set(visible), limit=OUTCOME_LIMIT))
        streamed, counted = boundary.watch_records(done.side, set(payloads) | {TAMPERED})
        if then:
            # a visible check's records count only as they were before the hidden inputs were sent:
            # a record sent later could carry them into a message the student reads (a rule's name,
            # a line count)
            early = boundary.watch_records(done.side[: done.side_first], set(payloads) | {TAMPERED})
            late = sorted(
                n
                for n in visible
                if streamed.get(n) != early[0].get(n) or counted.get(n) != early[1].get(n)
            )
            if late:
                # which checks is the process's choice, made holding the hidden inputs (a bit per
                # name: threat model, white-box red team 21, B7): the names go to the instructor's
                # details only
                verdict.tampered.append(
                    "records for visible checks came after the hidden inputs were sent (which: "
                    "the record's tamper_reports)"
                )
                verdict.tamper_reports.append(
                    f"visible checks with late records: {', '.join(late)[:300]}"
                )
            for n in visible:
                streamed[n], counted[n] = early[0].get(n, set()), early[1].get(n, {})
    except boundary.Rejected as e:
        # what broke the format is the process's to choose (a white-box red team announced a
        # 21-digit length after reading the hidden inputs and read it back from its page): the
        # instructor gets it, not the page
        verdict.error = "the verification output broke its format, so its results cannot be read"
        verdict.stderr_tail = f"{e}\n{verdict.stderr_tail}"[:4000]
        verdict.seconds = time.perf_counter() - t0
        return verdict
    from course_lib.checks.engine import CheckResult

    passed: dict[str, bool] = {}
    judged: dict = {}
    odd: set[str] = set()
    emptied: list[str] = []
    # the answers' process's words: the instructor's flag only
    tamper = sorted(streamed.get(TAMPERED, ()))
    for name, info in payloads.items():
        text = results.get(name)
        if text is None:
            passed[name] = False
            verdict.messages[name] = "no result for this check"
            judged[name] = CheckResult(
                name, len(json.loads(info["payload"])["cases"]), [("*", "no result")]
            )
            if name in verdict.hidden:
                verdict.public[name] = f"{name}: no result came back for this check"
            continue
        result, missing, unknown = _judge(
            course,
            name,
            info["kind"],
            text,
            frozenset(streamed.get(name, ())),
            counted.get(name, {}),
            info["forbidden"],
        )
        judged[name], odd = result, odd | unknown
        if missing:
            emptied.append(name)
            verdict.tamper_reports.append(
                f"{name}: sent out as it happened: {', '.join(sorted(missing))[:300]}"
            )
        broken = (rule_failures or {}).get(name, []) + (
            [f"{name}: {TAMPER_MESSAGE}"] if tamper else []
        )
        passed[name] = result.passed and not broken
        if not passed[name]:
            verdict.messages[name] = "\n".join(([] if result.passed else [result.message]) + broken)
            if name in verdict.hidden:
                verdict.public[name] = _public(result, broken)
    if emptied:  # one condition whichever checks: their names are the process's choice (B7)
        verdict.tampered.append(
            "the record of what an answer ran was emptied from inside its process (which "
            "checks: the record's tamper_reports)"
        )
    if tamper:
        verdict.tampered.append(
            "the notebook changed the checks' own code or state (what its process reported: the "
            "record's tamper_reports)"
        )
        verdict.tamper_reports += [
            f"the notebook changed the checks' own code or state: {why}" for why in tamper
        ]
    if odd:
        verdict.tampered.append(
            "the answers' process reported rules that no check names (what it reported: the "
            "record's tamper_reports)"
        )
        verdict.tamper_reports.append(f"rules no check names: {', '.join(sorted(odd))[:300]}")
    for name, message in memorised(
        payloads, judged, functools.partial(trivial_cases, course)
    ).items():
        if passed[name]:
            passed[name], verdict.messages[name] = False, message
    for name, info in payloads.items():
        if info["kind"] != "twin":
            continue
        # a twin's own message would show its (hidden) inputs
        message = verdict.messages.pop(name, "")
        if message:
            verdict.twin_failures[info["twin_of"]] = message
        if passed[info["twin_of"]] and not passed[name]:
            passed[info["twin_of"]] = False
            verdict.messages[info["twin_of"]] = (
                f"{info['twin_of']}: its visible cases pass, but not the same cases in disguise "
                "(relabelled or "
                "extended so that a correct answer's results follow exactly): the visible points "
                "need results "
                "computed from the inputs; an instructor will look at the details, since a slip "
                "that only the disguise reaches fails this way too"
                + (
                    " (the disguised cases' results could not be read)"
                    if _unreadable(judged.get(name))
                    else ""
                )
            )
    verdict.cells = {g: all(passed[n] for n in names) for g, names in cells.items()}
    verdict.seconds = time.perf_counter() - t0
    return verdict
