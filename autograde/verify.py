"""Verification outside the student's kernel: run the student's answers again in a fresh sandbox, judge here.

nbgrader runs a student's code and the tests in one kernel, so code that patches `np.allclose`, installs an
input transformer or rewrites `assert` can pass anything there. Here the tests are data (course_lib.checks),
so the harness can check every autograded cell a second time without trusting the kernel:

1. child (sandboxed, `python -m autograde.verify child`, its job framed on standard input): run the student's
   own code cells (not test cells, not `demo` cells) in a private IPython shell, call each exercise's function
   on the encoded inputs of its checks, write the outcomes as tagged JSON (never pickle). It sees no
   references, no solutions, no gradebook; the hidden checks' inputs reach it only after it has sent the
   visible checks' outcomes (whose messages the student sees), in a second round;
2. parent (trusted, this process): decode the outcomes, compare them with the expected values (visible
   checks' own, hidden checks' stored references) using each check's comparator.

A cell passes out of the kernel when every check its test code calls passes here. The harness then scores
each cell with the lower of the in-kernel and out-of-kernel results and flags disagreements for review.
"""

from __future__ import annotations

import copy
import functools
import json
import math
import os
import sys
import time
import types
from dataclasses import dataclass, field
from pathlib import Path

from autograde import boundary, sandbox
from autograde.course import REPO, Course, check_calls, is_autograded_test, is_demo, read_notebook

OUTCOME_LIMIT = boundary.FRAME_CAP  # bytes of outcomes JSON we are willing to read back
TAMPERED = "*"  # the check name of a side record saying that the notebook changed the checks themselves
WALL_FACTOR = 5  # a step's wall-clock backstop, in multiples of its CPU-time limit (as autograde.runner)


@dataclass
class Verdict:
    """Out-of-kernel result of one notebook: per graded cell, did every check pass, and why not."""

    cells: dict[str, bool] = field(default_factory=dict)  # grade_id -> all its checks passed
    messages: dict[str, str] = field(default_factory=dict)  # check name -> failure message
    error: str | None = None  # the child could not run at all (then every cell counts as failed)
    stderr_tail: str = ""     # the child's last words when it failed: the instructor's details only (a student
                              # could print what its answers saw of the hidden cases there, then exit)
    seconds: float = 0.0
    checks_of: dict[str, list[str]] = field(default_factory=dict)  # grade_id -> names of the checks it calls
    hidden: set[str] = field(default_factory=set)  # names of the hidden checks among them (never run in the kernel)
    memory_limit: bool = False  # its processes together reached the memory limit
    memory_enforced_by: str | None = None  # what held that limit (sandbox.MemoryGroup.enforced_by)
    twin_failures: dict[str, str] = field(default_factory=dict)  # visible check -> its twin's full message (the
                                                                 # instructor's details only: it shows hidden inputs)
    tampered: list[str] = field(default_factory=list)  # the answers changed what the checks observe: for a flag,
                                                       # in the grader's words only (a row's detail can reach the
                                                       # student: Gradescope shows it)
    tamper_reports: list[str] = field(default_factory=list)  # what the answers' process itself said about it: the
                                                             # instructor's details only (it can carry hidden inputs)
    public: dict[str, str] = field(default_factory=dict)  # hidden check -> its failure as the student may read it,
                                                          # built here from the check's own text alone


_PAYLOADS: dict[tuple, tuple[dict, dict]] = {}


def _payloads_of(course: Course, source: Path) -> tuple[dict, dict]:
    """_payloads of an instructor notebook, built once per process (the same for every student: ~1-3 s of
    case building, model calls included, that every grading repeated)."""
    st = source.stat()
    key = (str(source), st.st_mtime_ns, st.st_size, course.visible_package, course.hidden_package,
           tuple(str(p) for p in course.path_entries()))
    if key not in _PAYLOADS:
        _PAYLOADS[key] = _payloads(course, read_notebook(source))
    return _PAYLOADS[key]


def _payloads(course: Course, source_nb) -> tuple[dict, dict]:
    """{check name: (exercise, payload json)} for every check the notebook's test cells call; and cell -> names."""
    from course_lib.checks.engine import encode_cases

    visible, hidden = course.visible_registry(), course.hidden_registry()
    calls = [(grade_id, kind, name, (hidden if kind == "hidden_check" else visible).get(name))
             for grade_id, kind, name in check_calls(source_nb)]
    # a rule belongs to the exercise, not to one of its checks: every check of an exercise watches and reads
    # for the rules any of them names (red team 8: a hidden check without the list paid an answer its visible
    # check refused)
    forbidden: dict[str, list[str]] = {}
    ops: dict[str, list[str]] = {}
    for _, _, _, chk in calls:
        forbidden[chk.exercise] = list(dict.fromkeys([*forbidden.get(chk.exercise, []), *chk.forbidden]))
        ops[chk.exercise] = sorted({*ops.get(chk.exercise, []), *chk.forbidden_ops})
    payloads, cells = {}, {}
    for grade_id, kind, name, chk in calls:
        payloads[name] = {"exercise": chk.exercise,
                          "payload": encode_cases(chk.cases(), chk.allow_mutation, forbidden[chk.exercise],
                                                  ops[chk.exercise]),
                          "kind": kind, "forbidden": forbidden[chk.exercise]}
        cells.setdefault(grade_id, []).append(name)
    # Twins (autograde/hidden/_twins.py): a visible check's cases in disguise, run with the hidden checks; a
    # visible check passes outside the kernel only if its twin passes too, so public expected values typed in or
    # looked up earn nothing. (Imported here: the verification child, which imports this module, has no
    # autograde.hidden.)
    from autograde.hidden._twins import twins_of

    for twin, twin_of in twins_of(hidden, [call[:3] for call in calls]).items():
        chk = hidden.get(twin)
        payloads[twin] = {"exercise": chk.exercise, "twin_of": twin_of, "kind": "twin",
                          "payload": encode_cases(chk.cases(), chk.allow_mutation, forbidden[chk.exercise],
                                                  ops[chk.exercise]),
                          "forbidden": forbidden[chk.exercise]}
    return payloads, cells


def rules_of(course: Course, source: Path) -> dict[str, tuple[str, list[str]]]:
    """{check name: (exercise, forbidden calls)} for the checks of an instructor notebook: autograde.intake reads
    the submission's text for them (never the kernel's word). Every answer also may not use the course's
    checks (``<visible package>.*``): their cases and expected values are no answer (a red team's lookup of
    the visible cases got their points)."""
    payloads, _ = _payloads_of(course, Path(source))
    return {n: (p["exercise"], p["forbidden"] + [f"{course.visible_package}.*"]) for n, p in payloads.items()
            if p["kind"] != "twin"}


def _unreadable(result) -> bool:
    """Whether a check's outcomes were rejected at the boundary (``_judge``'s one failure labelled ``*``)."""
    return bool(result) and any(case == "*" and msg.startswith("unreadable outcomes")
                                for case, msg in result.failures)


UNKNOWN_RULE = "a routine this exercise asks you not to use (its name, as the answer's process wrote it, is withheld)"


def _known_rules(said: set[str] | frozenset[str], allowed: frozenset[str], odd: set[str]) -> set[str]:
    """The rules a process said were broken, as texts the grader wrote itself: a name outside the check's own
    list becomes UNKNOWN_RULE (it still fails the check) and goes to ``odd``, for the instructor's flag only: a
    forged record could carry any text, hidden inputs included, to the student's page."""
    odd |= set(said) - allowed
    return {r if r in allowed else UNKNOWN_RULE for r in said}


def _judge(course: Course, name: str, kind: str, outcomes_json: str, streamed: frozenset[str] = frozenset(),
           counted: dict[str, int] | None = None, forbidden: list[str] | None = None):
    """(the check's result, what its outcomes left out of the side records, rule texts outside its list).
    ``streamed``: the rules its watch sent as it saw them broken; ``counted``: per case, lines its counted call
    had run when last told (a lower bound). Both count whatever the outcomes say: the answer shared the process
    in which they were written. ``forbidden``: the exercise's rules, the only rule texts passed on."""
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
        # the check as a whole: its calls ran over the time limit, or the relay could not ask it (RELAY_DEAD)
        return CheckResult(name, len(cases), [("*", outcomes[0].error[:300])], chk.hint), set(), set()
    missing = set(streamed) - {r for o in outcomes for r in o.forbidden}
    allowed, odd = rule_names(forbidden or []), set()
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


TAMPER_MESSAGE = "your notebook changed the checks' own code or state: its results cannot be trusted"


def _public(result, broken: list[str]) -> str:
    """A hidden check's failure as the student may read it, from text the grader wrote alone: that it failed
    (not which cases or how many: a number the answer controls is a channel), that a rule was broken (one bit),
    the reading of the student's own text (``broken``), the hint.
    Nothing the answers' process wrote (case messages, labels, values, which rules it reported) is quoted."""
    labels = [label for label, _ in result.failures]
    parts = ([f"failed on some of its {result.n_cases} cases"] if any(label != "rules" for label in labels) else []
             ) + (["the answer breaks a rule of the exercise"] if "rules" in labels else [])
    lines = ([f"{result.name}: {', and '.join(parts)} (a hidden check shows neither which cases nor how many)"]
             if parts else [])
    # which rules the process said its answer broke stays off the page: a set of names from the check's own list
    # is a number the process chooses (a white-box red team wrote 64 bits of a hidden input as 64 rule names);
    # the reading of the student's own text (``broken``) names them
    lines += broken
    if result.hint:
        lines.append(f"Hint: {result.hint}")
    return "\n".join(lines)


MEMORISED_MIN_CASES = 3  # informative hidden cases needed before their results say anything about an answer
MEMORISED_SHARE = 1 / 3  # an answer passing fewer of them than this did not compute what its visible cases show


def _null_answers() -> list:
    """Answers that compute nothing: the input back, zeros, ones, the argmax, a constant, an error. A hidden case
    one of them passes (a filter that keeps everything, a must-raise case) shows nothing about an answer."""
    import torch

    def first(args):
        return args[0] if args else None

    def like(f):
        return lambda *a, **k: f(first(a)) if isinstance(first(a), torch.Tensor) else None

    def batch_zeros(*a, **k):
        x = first(a)
        return torch.zeros(x.shape[:-1], dtype=torch.long) if isinstance(x, torch.Tensor) and x.dim() else None

    def raising(exc):
        def null(*a, **k):
            raise exc("null answer")
        return null

    constants = [None, 0, 1, -1, 0.0, 1.0, True, False, (0, 0), [], ""]
    def copied(*a, **k):  # the input back, as a new object (a step must not return its input itself)
        x = first(a)
        return x.clone() if isinstance(x, torch.Tensor) else copy.deepcopy(x)

    return ([lambda *a, **k: first(a), copied, like(torch.zeros_like), like(torch.ones_like), batch_zeros,
             like(lambda x: x.argmax(dim=-1) if x.dim() else x), like(lambda x: torch.full_like(x, -math.inf)),
             raising(ValueError), raising(TypeError)]
            + [(lambda c: lambda *a, **k: c)(c) for c in constants])


@functools.lru_cache(maxsize=256)
def trivial_cases(course: Course, name: str) -> tuple[frozenset[str], frozenset[str]]:
    """(labels of a hidden check's cases, those of them some null answer passes), computed here (trusted)."""
    from course_lib.checks.engine import judge, run_cases

    registry = course.hidden_registry()
    chk = registry.get(name)
    cases = chk.cases()
    expected = registry.expected_values(name, cases)
    labels = frozenset(c.label for c in cases)
    passed: set[str] = set()
    for null in _null_answers():
        failed = {label for label, _ in judge(chk, cases, run_cases(chk, null, cases), expected).failures}
        if "*" not in failed:
            passed |= labels - failed
    return labels, frozenset(passed)


def memorised(payloads: dict, judged: dict, cases_of=None) -> dict[str, str]:
    """{visible check name: message} for visible checks passed by an answer that passes less than
    MEMORISED_SHARE of its exercise's informative hidden cases (those no null answer passes): the visible
    inputs are public, so outputs typed in for them (a lookup table, or values read at run time) pass; other
    inputs are what show an answer computes. The check then fails outside the kernel while it passed inside,
    so the row is flagged for a look (an instructor can give the points back).
    cases_of(name) -> (labels, trivially passed labels) of a hidden check (``trivial_cases``); without it,
    every case counts as informative."""
    def tally(name: str, result) -> tuple[int, int]:
        """(informative cases, of them passed) of one hidden check."""
        failed = {label for label, _ in result.failures}
        labels, trivial = cases_of(name) if cases_of is not None else (frozenset(), frozenset())
        n = len(labels - trivial) if cases_of is not None else result.n_cases
        if failed & {"*", "rules"}:
            # the check failed as a whole (unreadable or missing outcomes, a crash, an exception that is not an
            # Exception, a time limit) or broke a rule only on other inputs than the visible ones: every way a
            # lookup can fail hidden cases weighs against its visible points, none is "nothing to say"
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
        if info["kind"] != "check" or name not in judged or not judged[name].passed or not hidden \
                or all(judged[h].passed for h in hidden):
            continue
        counts = [tally(h, judged[h]) for h in hidden]
        n, passed = sum(c[0] for c in counts), sum(c[1] for c in counts)
        if n >= MEMORISED_MIN_CASES and passed < MEMORISED_SHARE * n:
            # how many passed is not said: a count the answers' process chooses is a channel out of the hidden cases
            out[name] = (f"{name}: its visible cases pass, but the hidden cases of the same exercise (other inputs) "
                         f"almost all fail (fewer than a third of the {n} that an answer computing nothing cannot "
                         "pass): points "
                         "for the visible cases need an answer that computes, not outputs typed in or looked up "
                         "for their inputs")
    return out


def check_package_files(course: Course, package: str) -> list[Path]:
    """The files (a module, or a package's folder) that make up an importable package of the course."""
    course.ensure_importable()
    spec = course.package_spec(package)
    if spec is None:
        return []
    if spec.submodule_search_locations:
        return [Path(p) for p in spec.submodule_search_locations]
    return [Path(spec.origin)]


SANDBOX_MODULES = ("__init__.py", "course.py", "kernel.py", "runner.py", "verify.py", "sandbox.py", "boundary.py")


def course_sandbox(course: Course, model_file: Path | None) -> tuple[list[Path], dict[str, str]]:
    """What any sandbox running a course's student code sees: read-only files and folders, and environment.

    Least privilege: Python, course_lib, the course's visible checks, the model file, and the few harness
    modules that run inside (the runner, the kernel, the verification child). Not the hidden checks, their
    references, solutions/, the bug zoo, other students, the output folder or any gradebook.
    """
    readonly = [REPO / "course_lib", *[REPO / "autograde" / m for m in SANDBOX_MODULES]]
    if course.visible_package.split(".")[0] != "course_lib":
        readonly += check_package_files(course, course.visible_package)
    env = {"PYTHONPATH": os.pathsep.join(course.path_entries()), "COURSE_GRADING": "1", "MPLBACKEND": "Agg",
           "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "PYTHONHASHSEED": "0", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
           "IPYTHONDIR": "/tmp/ipython", "MPLCONFIGDIR": "/tmp/mpl"}
    if model_file is not None:
        readonly.append(model_file)
        env["COURSE_MODEL_FILE"] = str(model_file)
        fp32 = model_fp32_file(model_file)
        if fp32 is not None:  # the float32 weights, mapped instead of dequantized (course_lib.weights.fp32_file)
            readonly.append(fp32)
            env["COURSE_MODEL_FP32"] = str(fp32)
    return readonly, env


@functools.lru_cache(maxsize=8)
def model_fp32_file(model_file: Path) -> Path | None:
    """The grader's float32 copy of the model file's weights, made here (trusted) the first time; or None."""
    from course_lib import weights
    try:
        return weights.ensure_fp32(model_file, weights.sha256_of(model_file))
    except Exception:  # noqa: BLE001 - not the course's model (a fixture): sandboxes dequantize as before
        return None


def verify_notebook(course: Course, source: Path, notebook_json: str, *, slot: int = 0,
                    policy: sandbox.Policy = sandbox.Policy(), wall_s: float = 600.0,
                    model_file: Path | None = None, step_timeout: float = 120.0,
                    skip_cells: tuple[int, ...] = (), sandboxed: bool = True,
                    rule_failures: dict[str, list[str]] | None = None) -> Verdict:
    """Run the submission's answers in a fresh sandbox and judge every check of its graded cells here.

    notebook_json: the rebuilt submission (autograde.sanitize), sent to the child on its standard input.
    step_timeout: seconds each of the student's cells, and each check's calls, may run (as nbgrader's cell
    timeout), so that one endless loop costs only its own answer.
    skip_cells: indices of cells not to run, as in the kernel (they killed it, or ignored its interrupt): a
    cell that crashes its process would otherwise cost every answer here, not only its own.
    sandboxed: False only for `grade --no-sandbox` (then the child is a plain process with the same limits).
    rule_failures: {check name: messages}: forbidden calls found in the submission's text (autograde.intake,
    from ``rules_of``); each such check fails with those messages, whatever its values.
    """
    t0 = time.perf_counter()
    payloads, cells = _payloads_of(course, Path(source))
    verdict = Verdict(cells={g: False for g in cells}, checks_of=cells,
                      hidden={n for n, info in payloads.items() if info["kind"] == "hidden_check"})
    if not payloads:
        return verdict
    readonly, env = course_sandbox(course, model_file)
    env.update({"AUTOGRADE_STEP_TIMEOUT": str(int(step_timeout)),
                "AUTOGRADE_SKIP_CELLS": ",".join(str(i) for i in sorted(skip_cells)),
                "AUTOGRADE_CHECK_PACKAGES": course.visible_package})
    argv = [sys.executable, "-m", "autograde.verify", "child"]
    # Two rounds: the visible checks' inputs with the notebook, the hidden checks' only once the visible results
    # are in. A visible check's message reaches the student's page, and nothing the process holds before then
    # (memory an answer can search, not only the inputs it is called with) includes a hidden input.
    visible = {n: info for n, info in payloads.items() if info["kind"] == "check"}
    hidden = {n: info for n, info in payloads.items() if info["kind"] != "check"}  # hidden checks and twins
    job = boundary.frame(json.dumps({"notebook": notebook_json, "payloads": visible, "then": bool(hidden)}).encode())
    then = boundary.frame(json.dumps({"payloads": hidden}).encode()) if hidden else None
    group = (sandbox.MemoryGroup(policy.memory_bytes, "verify", watch_bytes=policy.address_space)
             if sandboxed else None)
    if sandboxed:
        cmd = group.prefix() + sandbox.wrap(argv, readonly=readonly, policy=policy, slot=slot, env=env)
        run_env = None
    else:
        cmd = ["prlimit", f"--as={policy.address_space}", f"--cpu={policy.cpu_seconds}", "--core=0", "--", *argv]
        run_env = {**os.environ, **env}
    try:
        try:
            done = boundary.run(cmd, job, limit=OUTCOME_LIMIT, deadline_s=wall_s, env=run_env,
                                started=group.started if group is not None else None, then=then)
        finally:
            verdict.memory_limit = group is not None and group.hit()
            verdict.memory_enforced_by = group.enforced_by if group is not None else None
            if group is not None:
                group.close()
        if done.message is None:
            # the kind of failure in the grader's words; the exit status is the process's to choose (a number
            # on the student's page is a channel), so it goes to the instructor's details with the stderr
            verdict.stderr_tail = f"exit status {done.returncode}\n{done.stderr.strip()[-2000:]}"
            verdict.error = (f"out-of-kernel verification ran over {wall_s:.0f} s" if done.timed_out else
                             "the verification output was over its size limit" if done.over_limit else
                             "the verification process exited before sending its results")
            verdict.seconds = time.perf_counter() - t0
            return verdict
        results = boundary.check_outcomes(done.message, set(hidden) if then else set(visible), limit=OUTCOME_LIMIT)
        if then:
            results.update(boundary.check_outcomes(done.first, set(visible), limit=OUTCOME_LIMIT))
        streamed, counted = boundary.watch_records(done.side, set(payloads) | {TAMPERED})
        if then:
            # a visible check's records count only as they were before the hidden inputs were sent: a record
            # sent later could carry them into a message the student reads (a rule's name, a line count)
            early = boundary.watch_records(done.side[:done.side_first], set(payloads) | {TAMPERED})
            late = sorted(n for n in visible if streamed.get(n) != early[0].get(n) or counted.get(n) != early[1].get(n))
            if late:
                verdict.tampered.append("records for visible checks came after the hidden inputs were sent: "
                                        f"{', '.join(late)[:300]}")
            for n in visible:
                streamed[n], counted[n] = early[0].get(n, set()), early[1].get(n, {})
    except boundary.Rejected as e:
        # what broke the format is the process's to choose (a white-box red team announced a 21-digit length
        # after reading the hidden inputs and read it back from its page): the instructor gets it, not the page
        verdict.error = "the verification output broke its format, so its results cannot be read"
        verdict.stderr_tail = f"{e}\n{verdict.stderr_tail}"[:4000]
        verdict.seconds = time.perf_counter() - t0
        return verdict
    from course_lib.checks.engine import CheckResult

    passed, judged, odd = {}, {}, set()
    tamper = sorted(streamed.get(TAMPERED, ()))  # the answers' process's words: the instructor's flag only
    for name, info in payloads.items():
        text = results.get(name)
        if text is None:
            passed[name] = False
            verdict.messages[name] = "no result for this check"
            judged[name] = CheckResult(name, len(json.loads(info["payload"])["cases"]), [("*", "no result")])
            if name in verdict.hidden:
                verdict.public[name] = f"{name}: no result came back for this check"
            continue
        result, missing, unknown = _judge(course, name, info["kind"], text, frozenset(streamed.get(name, ())),
                                          counted.get(name, {}), info["forbidden"])
        judged[name], odd = result, odd | unknown
        if missing:
            verdict.tampered.append(f"{name}: the record of what the answer ran was emptied from inside its process")
            verdict.tamper_reports.append(f"{name}: sent out as it happened: {', '.join(sorted(missing))[:300]}")
        broken = (rule_failures or {}).get(name, []) + ([f"{name}: {TAMPER_MESSAGE}"] if tamper else [])
        passed[name] = result.passed and not broken
        if not passed[name]:
            verdict.messages[name] = "\n".join(([] if result.passed else [result.message]) + broken)
            if name in verdict.hidden:
                verdict.public[name] = _public(result, broken)
    if tamper:
        verdict.tampered.append("the notebook changed the checks' own code or state (what its process reported: the "
                                "record's tamper_reports)")
        verdict.tamper_reports += [f"the notebook changed the checks' own code or state: {why}" for why in tamper]
    if odd:
        verdict.tampered.append("the answers' process reported rules that no check names (what it reported: the "
                                "record's tamper_reports)")
        verdict.tamper_reports.append(f"rules no check names: {', '.join(sorted(odd))[:300]}")
    for name, message in memorised(payloads, judged, functools.partial(trivial_cases, course)).items():
        if passed[name]:
            passed[name], verdict.messages[name] = False, message
    for name, info in payloads.items():
        if info["kind"] != "twin":
            continue
        message = verdict.messages.pop(name, None)  # a twin's own message would show its (hidden) inputs
        if message:
            verdict.twin_failures[info["twin_of"]] = message
        if passed[info["twin_of"]] and not passed[name]:
            passed[info["twin_of"]] = False
            verdict.messages[info["twin_of"]] = (
                f"{info['twin_of']}: its visible cases pass, but not the same cases in disguise (relabelled or "
                "extended so that a correct answer's results follow exactly): the visible points need results "
                "computed from the inputs; an instructor will look at the details, since a slip that only the "
                "disguise reaches fails this way too"
                + (" (the disguised cases' results could not be read)" if _unreadable(judged.get(name)) else ""))
    verdict.cells = {g: all(passed[n] for n in names) for g, names in cells.items()}
    verdict.seconds = time.perf_counter() - t0
    return verdict


# ------------------------------------------------------------------------------------ the child (untrusted)
def _function(value) -> types.FunctionType | None:
    """The Python function a value stands for: itself, a method's or a functools wrapper's (lru_cache)."""
    fn = getattr(value, "__func__", value)
    fn = getattr(fn, "__wrapped__", fn)
    return fn if isinstance(fn, types.FunctionType) else None


def _fingerprint(value) -> tuple:
    """Identity of a value and, for a function, of its code, defaults and closure (what a cell could swap)."""
    fn = _function(value)
    if fn is None:
        return (id(value),)
    cells = []
    for c in fn.__closure__ or ():
        try:
            cells.append(id(c.cell_contents))
        except ValueError:  # a cell not filled yet
            cells.append(0)
    return (id(value), id(fn.__code__), id(fn.__defaults__), id(fn.__kwdefaults__), tuple(cells))


_LAZY_CLASS_ATTRS = {"__slotnames__"}  # what the standard library caches on a class (copyreg, for deepcopy)


class _Seal:
    """The checks as they were before any cell ran: the module-level names of every module under the given
    prefixes (and of ``own``, this running module), each function's code, defaults and closure, each class's
    attributes. ``broken()`` names what changed since: a cell that rebinds ``engine._watch``, ``Watch.saw`` or a
    module in ``sys.modules`` changes what the checks observe in this process, which the answer shares."""

    def __init__(self, prefixes: tuple[str, ...], own: types.ModuleType) -> None:
        self.modules = {n: m for n, m in list(sys.modules.items()) if m is not None and n != "__main__"
                        and any(n == p or n.startswith(p + ".") for p in prefixes)}
        self.own = own
        self.state = self._state()
        # the functions sealed, by identity: an audit hook asks whether a swapped __code__ was one of theirs
        self.functions = {id(f) for _, v in self._entries(any_class=True) if (f := _function(v)) is not None}

    def _entries(self, any_class: bool = False):
        """(key, value) of every sealed name: each module-level name, and the attributes of the classes there (the
        modules' own classes; with ``any_class``, every class they name)."""
        for name, module in [*self.modules.items(), ("(this process's checker)", self.own)]:
            for key, value in list(vars(module).items()):
                yield (name, key), value
                if isinstance(value, type) and (any_class or value.__module__ == module.__name__):
                    for attr, v in list(vars(value).items()):
                        yield (name, key, attr), v

    def _state(self) -> dict[tuple[str, ...], tuple]:
        out: dict[tuple[str, ...], tuple] = {("sys.modules", n): (id(sys.modules.get(n)),) for n in self.modules}
        out.update((key, _fingerprint(value)) for key, value in self._entries())
        return out

    def broken(self) -> list[str]:
        """What changed: a name rebound or removed, or a class given a new attribute (a module's new names, such
        as a submodule imported later, change nothing the checks look up)."""
        now = self._state()
        changed = sorted(".".join(k) for k in self.state.keys() | now.keys()
                         if (k in self.state and now.get(k) != self.state[k])
                         or (k not in self.state and len(k) == 3 and k[2] not in _LAZY_CLASS_ATTRS))
        return [f"changed {', '.join(changed[:3])}{' ...' if len(changed) > 3 else ''}"] if changed else []


def _student_threads() -> str:
    """Names of live threads (other than this one) running code from outside the installed libraries: a
    notebook's own worker. Library threads (tqdm's monitor, a thread pool torch or IPython keeps) do not count."""
    import threading

    library = tuple({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)})
    names = {t.ident: t.name for t in threading.enumerate()}
    busy = []
    for ident, frame in sys._current_frames().items():
        if ident == threading.get_ident():
            continue
        while frame is not None:
            path = frame.f_code.co_filename
            if not (path.startswith("<frozen") or os.path.realpath(path).startswith(library)
                    or path.startswith(str(Path(__file__).resolve().parents[1]))):
                busy.append(names.get(ident, f"thread {ident}"))
                break
            frame = frame.f_back
    return ", ".join(busy[:3])


def _read_frame(fd: int, read=os.read) -> bytes:
    """One framed message (as boundary.frame writes it) from a descriptor, read no further; b"" at its end."""
    head = b""
    while not head.endswith(b"\n") and len(head) < 24:
        byte = read(fd, 1)
        if not byte:
            return b""
        head += byte
    if not head.strip().isdigit():
        raise SystemExit("no framed message")
    data, n = bytearray(), int(head)
    while len(data) < n:
        chunk = read(fd, n - len(data))
        if not chunk:
            break
        data += chunk
    return bytes(data)


def _child() -> int:
    """The verification sandbox's first process, the relay: it holds the grader's pipes and runs no student cell.

    It forks the answers' process (``_answers``), which runs the notebook's cells with standard input and output
    on /dev/null and a socket to the relay as its only channel; the relay then asks it for one check at a time
    (the hidden checks' inputs only once the grader sent them, after the visible results went out) and writes
    what comes back to the grader, framed by itself: side records at once, each check's outcomes as the text of
    its reply. So a cell can neither write the grader's frames nor read its input, answer a check it was not
    asked, or see a hidden input before its check is asked (issue 37: a white-box red team wrote both frames from a
    cell, reading the hidden inputs from standard input). The relay is not dumpable: a process of the same uid
    cannot trace it, read its memory or take its descriptors (as autograde.runner)."""
    import signal
    import socket

    from autograde.runner import _not_dumpable

    job = json.loads(_read_frame(0) or b"{}")
    if "notebook" not in job:
        raise SystemExit("no job on standard input")
    _not_dumpable()  # before the fork: the answers' process starts not dumpable too, and never holds the relay's
    ours, theirs = socket.socketpair()
    pid = os.fork()
    if pid == 0:
        ours.close()
        null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, 0)  # the grader's pipes: gone from this process before any cell runs
        os.dup2(null, 1)
        os.close(null)
        try:
            _answers(job, theirs.detach())
        finally:
            os._exit(0)
    theirs.close()
    # a cell can write files into the sandbox's working folder; nothing the relay imports from now on comes from it
    sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]
    try:
        return _relay(job, ours)
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


RELAY_DEAD = "the answers' process ended or broke the relay's protocol before this check was answered"


def _relay(job: dict, sock) -> int:
    """Ask the answers' process for each check's outcomes; write them to the grader (see ``_child``)."""
    def write(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(1, view):]

    buf = bytearray()
    dead: list[str] = []  # why the answers' process can no longer be asked (then every later check says so)

    unanswered = json.dumps([{"label": "*", "error": RELAY_DEAD, "mutated": []}])  # a check as a whole, failed

    def ask(name: str, info: dict) -> str:
        if dead:
            return unanswered
        try:
            sock.sendall(boundary.frame(json.dumps({"name": name, "info": info}).encode()))
            while True:
                side, message = boundary.take_reply(buf, OUTCOME_LIMIT)
                for record in side:
                    write(boundary.side_frame(record))  # at once, in order: what the grader has, stays
                if message is not None:
                    return message.decode("utf-8", errors="replace")
                chunk = sock.recv(1 << 20)
                if not chunk:
                    raise boundary.Rejected("the answers' process closed its channel")
                buf.extend(chunk)
        except (OSError, boundary.Rejected) as e:
            dead.append(str(e)[:300])
            print(f"relay: {dead[0]}", file=sys.stderr)
            return unanswered

    write(boundary.frame(json.dumps({n: ask(n, info) for n, info in job["payloads"].items()}).encode()))
    if job.get("then"):
        hidden = json.loads(_read_frame(0) or b"{}").get("payloads", {})
        write(boundary.frame(json.dumps({n: ask(n, info) for n, info in hidden.items()}).encode()))
    return 0


def _answers(job: dict, out_fd: int) -> None:
    """The answers' process: run the notebook's code cells, then answer the relay's requests, one check each."""
    # a module a cell writes into the working folder must not be what `import <an allowed module>` finds (white-box
    # red team 20: code that no reading of the text sees); the course's modules come from PYTHONPATH
    sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]
    import io
    import contextlib
    import signal

    import nbformat

    read, write = os.read, os.write  # kept before any student code runs (a cell may replace os's)
    read_frame = _read_frame

    def send(payload: bytes) -> None:
        write(out_fd, b"%d\n" % len(payload))
        view = memoryview(payload)
        while view:
            view = view[write(out_fd, view):]

    from json.encoder import encode_basestring_ascii as quote  # C code: nothing a cell rebinds reaches it
    reported: set[tuple[str, str]] = set()

    side_frame = boundary.side_frame  # bound before any cell (boundary is sealed below: its code swapped is seen)

    def send_side(key: tuple[str, str], payload: bytes) -> None:
        """A side record out at once: what the parent has, no cell can take back."""
        if key in reported or len(reported) >= 256:
            return
        reported.add(key)
        view = memoryview(side_frame(payload))
        while view:
            view = view[write(out_fd, view):]

    def side(check: str, rule: str) -> None:
        send_side((check, rule[:150]), b'{"check": %s, "rule": %s}' % (quote(check).encode(),
                                                                        quote(rule[:150]).encode()))

    def side_steps(check: str, label: str, steps: int) -> None:
        send_side((check, f"{label[:100]}\0{steps}"), b'{"check": %s, "case": %s, "steps": %d}'
                  % (quote(check).encode(), quote(label[:100]).encode(), int(steps)))

    real_exit = os._exit
    nb = nbformat.reads(job["notebook"], as_version=4)
    from IPython.core.interactiveshell import InteractiveShell

    from course_lib.checks import engine
    # Check modules register the loaders of shared inputs (e.g. the model) when imported.
    for package in os.environ.get("AUTOGRADE_CHECK_PACKAGES", "course_lib.checks").split(","):
        try:
            engine.Registry(package).all()
        except Exception:  # a broken check module must not stop the other checks
            pass
    from course_lib.checks import trace
    trace._listen()  # its audit hook, in place before any cell (it is part of the seal below)
    run_encoded = engine.run_encoded
    # json too: the child writes its results with it (a white-box red team rewrote them through json.dumps)
    sealed = tuple(p for p in ("course_lib.checks", "autograde", "json",
                               *os.environ.get("AUTOGRADE_CHECK_PACKAGES", "").split(",")) if p)
    seal = _Seal(sealed, sys.modules[__name__])
    broken_seal, seal_functions = seal.broken, seal.functions  # bound now: rebinding _Seal.broken reaches nothing

    def on_audit(event: str, args: tuple) -> None:
        # a checks' function's code swapped and back within one call leaves no trace for the seal: seen as it
        # happens (libraries swap their own: asyncio's types.coroutine sets __code__ when IPython imports it)
        if event == "object.__setattr__" and len(args) > 1 and args[1] == "__code__":
            if id(args[0]) in seal_functions:
                side(TAMPERED, f"a function's code was replaced ({getattr(args[0], '__qualname__', '?')!s:.80})")

    sys.addaudithook(on_audit)
    step = int(os.environ.get("AUTOGRADE_STEP_TIMEOUT", "120"))
    skip = {int(i) for i in os.environ.get("AUTOGRADE_SKIP_CELLS", "").split(",") if i}

    class StepTimeout(BaseException):  # not an Exception: the engine must not swallow it as one case's error
        pass

    def on_alarm(signum, frame):
        raise StepTimeout(f"took longer than {step} s" if signum == signal.SIGPROF else
                          f"waited longer than {step * WALL_FACTOR} s")

    # As in the kernel (autograde.runner.CpuWatch): the limit counts CPU time, so a loaded machine does not
    # turn slow work into a timeout; a wall-clock backstop stops a call that sleeps.
    signal.signal(signal.SIGPROF, on_alarm)
    signal.signal(signal.SIGALRM, on_alarm)

    class limit_step:
        def __enter__(self):
            signal.setitimer(signal.ITIMER_PROF, step)
            signal.alarm(step * WALL_FACTOR)

        def __exit__(self, *exc):
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.alarm(0)
    shell = InteractiveShell()
    sink = io.StringIO()

    def refuse_exit(code=0):
        raise SystemExit(f"os._exit({code}) is not allowed while checking answers")

    os._exit = refuse_exit  # a cell that kills its process must not cost the other answers their check
    import posix
    posix._exit = refuse_exit  # the same C function under its other name (a white-box red team's exit status)
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or is_autograded_test(cell) or is_demo(cell) or index in skip:
            continue
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            try:
                with limit_step():
                    shell.run_cell(cell.source, silent=True, store_history=False)  # IPython reports its errors
            except BaseException:  # an alarm that struck between IPython's own handlers
                pass
        sink.seek(0)
        sink.truncate()
    for why in broken_seal():
        side(TAMPERED, why)
    hung: dict[str, str] = {}  # exercise -> the check whose call ran over the step limit

    def run_check(name: str, info: dict) -> str:
        fn = shell.user_ns.get(info["exercise"])
        if info.get("forbidden") and (busy := _student_threads()):
            # the rules are watched in this thread only; a thread the notebook left running could do the work
            why = (f"a thread your notebook started ({busy}) was still running when this check ran: the rules of "
                   "this exercise cannot be checked next to it (answers must not leave threads running)")
            return json.dumps([{"label": c["label"], "error": why, "mutated": []}
                               for c in json.loads(info["payload"])["cases"]])
        if info["exercise"] in hung:
            # as in the kernel, where the test cell stops at its first endless call: one loop costs one answer once
            why = f"StepTimeout: not run: {info['exercise']} took longer than {step} s in {hung[info['exercise']]}"
            return json.dumps([{"label": "*", "error": why, "mutated": []}])
        try:
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), limit_step():
                return run_encoded(fn, info["payload"], lambda rule: side(name, rule),
                                   lambda label, steps: side_steps(name, label, steps))
        except BaseException as e:  # the student's error (a timeout, SystemExit) is the check's outcome
            if isinstance(e, StepTimeout):
                hung[info["exercise"]] = name
            return json.dumps([{"label": "*", "error": f"{type(e).__name__}: {e}", "mutated": []}])
        finally:
            sink.seek(0)
            sink.truncate()
            for why in broken_seal():
                side(TAMPERED, why)

    while True:  # one request, one reply, until the relay is done (it then kills this process)
        request = read_frame(out_fd, read)
        if not request:
            break
        request = json.loads(request)
        send(run_check(request["name"], request["info"]).encode())
    real_exit(0)  # a thread the student left running must not keep this process waiting




if __name__ == "__main__":
    if sys.argv[1:] == ["child"]:
        sys.exit(_child())
    print("usage: python -m autograde.verify child  (job on standard input)", file=sys.stderr)
    sys.exit(2)
