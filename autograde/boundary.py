"""The trust boundary: every byte that reaches the grader from a sandbox or a submitted file passes
here.

Nothing else in the harness reads what a student's code produced or what a student submitted. The
rules:
- files (only submissions: sandboxes write none) are opened without following links or blocking,
must be
  regular files, and are read up to a cap (``read_submission``);
- a sandbox speaks only through its standard output: one framed message (``frame``,
autograde.inside.wire:
  the format, shared with the processes that write it), or two where the grader
  holds back part of its input until the first is in (``run(then=...)``), read with a size cap and a
  deadline; between them, small side records (``side_frame``: what the checks' watch saw, written
  the moment it saw it), at most ``SIDE_COUNT`` of ``SIDE_BYTES`` each, parsed by ``watch_records``;
  on the deadline, an oversized message, or once the last message is in, the whole sandbox is killed
  (its pid namespace ends with it, threads included) (``run``);
- no message is longer than ``FRAME_CAP`` whatever limit a caller passes (the honest maximum is ~10
MB);
- JSON is counted before it is parsed: at most ``VALUES_CAP`` values, counted from its bytes, so no
Python object
  is built for a document that would hold more (a 60 MB frame of nested empty lists became 3.6 GB in
  the grader);
- JSON is parsed with a size cap, a depth cap and no NaN/Infinity, then checked against the exact
shape the
  grader expects: known keys, types, indices in range, text truncated to caps (``loads``,
  ``cell_outputs``, ``check_outcomes``). Anything else raises ``Rejected`` with a one-line reason,
  which the grader turns into that student's status and detail; the run goes on.
Reviewed as a unit: autograde/tests/test_boundary.py fuzzes each parser with generated input.
"""

from __future__ import annotations

import json
import math
import os
import re
import resource
import select
import signal
import stat
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograde.inside.wire import (  # noqa: F401 - re-exported: the format both sides speak
    FRAME_CAP,
    SIDE_BYTES,
    SIDE_COUNT,
    Rejected,
    frame,
    peek_message,
    read_side_records,
    side_frame,
    take_reply,
)

MAX_DEPTH = 64  # deepest JSON nesting accepted from a sandbox or a submission (notebooks need < 10)
TEXT_CAP = 200_000  # characters kept of one output text
ITEMS_CAP = 200  # outputs kept per cell
# Measured on the five reference notebooks graded end to end (docs/sandbox.md, "Bounds"): the
# largest honest message is 10.1 MB (05's hidden checks' outcomes), the largest JSON document
# 311,000 values (one check's outcomes). Both caps leave room for a wrong answer's bigger outputs
# and bound the grader's memory per parse.
VALUES_CAP = 1_000_000  # JSON values (and object keys) in one document from a sandbox
# in one verification message, its strings' contents counted: every outcomes document it holds
# together (honest max 975,000: 03's hidden checks)
MESSAGE_VALUES_CAP = 4_000_000


# ------------------------------------------------------------------------------------------- files
def read_submission(path: Path, limit: int) -> bytes:
    """The bytes of a submitted file: a regular file reached without a link, at most ``limit``
    bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        raise Rejected(
            f"{Path(path).name}: not a plain file, or unreadable ({os.strerror(e.errno or 0)})"
        ) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Rejected(f"{Path(path).name}: not a plain file (a FIFO, device or folder)")
        if st.st_size > limit:
            raise Rejected(f"{Path(path).name}: {st.st_size} bytes, over the limit of {limit}")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise Rejected(f"{Path(path).name}: over the limit of {limit} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


def is_plain_file(path: Path) -> bool:
    """Whether path is a regular file itself (not a link to one): what ``read_submission`` would
    accept."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


# --------------------------------------------------------------------------------------- processes
@dataclass
class Finished:
    """What came back from a sandboxed process."""

    message: bytes | None  # the framed message (the second, with ``then``), if one arrived whole
    returncode: int | None  # None if it was still running when the grader killed it
    stderr: str  # the last few KB of what it wrote to standard error
    timed_out: bool = False
    over_limit: bool = False
    seconds: float = 0.0
    first: bytes | None = None  # with ``then``: the first message
    side: list[bytes] = field(default_factory=list)  # side records, in the order they came
    # with ``then``: how many of them came before the first message (before ``then`` was sent)
    side_first: int = 0


def _kill(p: subprocess.Popen) -> None:
    try:
        os.killpg(p.pid, signal.SIGKILL)  # the sandbox runs in a session of its own
    except (ProcessLookupError, PermissionError):
        pass
    try:
        p.kill()
    except ProcessLookupError:
        pass


def run(
    cmd: list[str],
    stdin: bytes,
    *,
    limit: int,
    deadline_s: float,
    env: dict | None = None,
    started=None,
    then: bytes | None = None,
) -> Finished:
    """Run cmd, feed it stdin, and read one framed message from its stdout within limit bytes and
    deadline_s.

    ``then``: more input, written only once a first message is in; a second message is then read
    (same cap, same deadline in all) and returned, the first in ``Finished.first``. What the process
    holds before its first message cannot include ``then``: the verification sends the hidden
    checks' inputs this way, after the visible checks' results, whose messages a student sees.

    The process (a sandbox) is killed as soon as its message is in, on the deadline, or when it
    sends more than ``limit`` bytes (at most ``FRAME_CAP``); nothing it leaves running (a thread, a
    background process holding its stdout open) can make the grader wait longer than the deadline.
    ``started(pid)``, if given, is told the process's pid (a memory watchdog, sandbox.MemoryGroup).

    Why long: one loop owns the process, its three pipes and the deadline, and every way out of it
    must pass the one ``finally`` that kills the process; split, each part would share that state
    and that duty.
    """
    limit = min(limit, FRAME_CAP)
    t0 = time.monotonic()
    p = subprocess.Popen(
        cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env=env,
    )
    if started is not None:
        started(p.pid)
    # all three are pipes above
    assert p.stdin is not None and p.stdout is not None and p.stderr is not None
    out, err = bytearray(), bytearray()
    out_fd, err_fd, in_fd = p.stdout.fileno(), p.stderr.fileno(), p.stdin.fileno()
    for fd in (out_fd, err_fd, in_fd):
        os.set_blocking(fd, False)
    pending = memoryview(stdin)
    if not pending and then is None:
        p.stdin.close()
    open_fds = {out_fd, err_fd}
    result = Finished(None, None, "")
    try:
        while True:
            read_side_records(out, result.side)
            message = peek_message(out, limit)
            if message is not None and then is not None:
                result.first, result.side_first = message, len(result.side)
                del out[: len(bytes(out[:24]).partition(b"\n")[0]) + 1 + len(message)]
                pending, then = memoryview(bytes(pending) + then), None
                continue
            if message is not None:
                result.message = message
                break
            if len(out) > limit + 32:
                result.over_limit = True
                break
            if out_fd not in open_fds:
                break  # its standard output closed without a whole message
            left = deadline_s - (time.monotonic() - t0)
            if left <= 0:
                result.timed_out = True
                break
            r, w, _ = select.select(
                sorted(open_fds), [in_fd] if pending else [], [], min(left, 1.0)
            )
            if w:
                try:
                    pending = pending[os.write(in_fd, pending[: 1 << 16]) :]
                except BrokenPipeError:
                    pending = memoryview(b"")
                if not pending and then is None:
                    p.stdin.close()
            for fd in r:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    open_fds.discard(fd)
                elif fd == out_fd:
                    out += chunk
                else:
                    err += chunk
                    del err[:-8192]
    finally:
        if p.stdin and not p.stdin.closed:
            try:
                p.stdin.close()
            except BrokenPipeError:
                pass
        try:
            result.returncode = p.wait(timeout=0.5 if result.message is not None else 0.05)
        except subprocess.TimeoutExpired:
            result.returncode = None
        _kill(p)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        for f in (p.stdout, p.stderr):
            f.close()
    result.stderr = err.decode(errors="replace")
    result.seconds = time.monotonic() - t0
    return result


# A grader's own memory (RLIMIT_DATA, set by the grader's entry point): grading the five references
# with one worker peaked at 0.45 GB resident (1.13 GB of data with measuring wrappers that copied
# every message), and graded them alike under GRADER_BYTES + WORKER_BYTES; each concurrent worker
# adds its messages (FRAME_CAP each) and their parses (<= 50 MB per document, MESSAGE_VALUES_CAP
# values per report).
GRADER_BYTES = 3 << 30
WORKER_BYTES = 1 << 30


def limit_memory(nbytes: int) -> None:
    """Hold this process (one that parses what sandboxes send) to ``nbytes`` of data: RLIMIT_DATA's
    soft limit, lowered only. Past it an allocation raises MemoryError in this process instead of
    the machine running out. RLIMIT_DATA rather than RLIMIT_AS: it counts the private writable
    memory (heap, anonymous mappings, thread stacks), not the address space that torch and the
    allocator reserve without using."""
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        nbytes = min(nbytes, hard)
    if soft == resource.RLIM_INFINITY or soft > nbytes:
        resource.setrlimit(resource.RLIMIT_DATA, (nbytes, hard))


# -------------------------------------------------------------------------------------------- JSON
def _no_constants(name: str) -> Any:
    raise Rejected(f"{name} is not allowed in JSON here")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999 parses to inf without passing parse_constant
        raise Rejected(f"{text[:20]} is not a finite number")
    return value


# One JSON string as the parser reads it; an unterminated one runs to the end (the text is then no
# JSON anyway), so no match ever fails and backtracks: without that end, a run of \" made this
# quadratic (40 kB: 5 s).
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*(?:"|\\?\Z)', re.DOTALL)


def _count(b: bytes) -> int:
    return b.count(b",") + b.count(b"[") + b.count(b"{") + b.count(b":") + 1


def count_values(data: bytes, cap: int = VALUES_CAP) -> int:
    """An upper bound on the values and keys of the JSON document ``data``, counted from its bytes
    (no object built).

    Every value is the whole document, the first in an array or object (at most one per ``[`` or
    ``{``) or follows a comma, and every key is followed by a colon: outside strings, commas +
    brackets + colons + 1 bounds them all. Counted first over all the bytes (strings included, an
    overcount); only when that passes the cap, again with the strings taken out (the parser's own
    reading of a string). Raises Rejected past ``cap``."""
    n = _count(data)
    if n > cap:
        n = _count(_STRING.sub(b"", data))
        if n > cap:
            raise Rejected(f"JSON of more than {cap} values")
    return n


def loads(
    data: bytes, *, limit: int, max_depth: int = MAX_DEPTH, max_values: int = VALUES_CAP
) -> Any:
    """Parse untrusted JSON: at most ``limit`` bytes and ``max_values`` values (counted before
    parsing), nesting at most ``max_depth``, no NaN or Infinity."""
    if len(data) > limit:
        raise Rejected(f"{len(data)} bytes of JSON, over the limit of {limit}")
    count_values(data, max_values)
    try:
        text = data.decode("utf-8")
        value = json.loads(text, parse_constant=_no_constants, parse_float=_finite)
    except RecursionError:
        raise Rejected("JSON nested too deeply") from None
    except ValueError as e:  # not JSON, not UTF-8, or an integer past Python's 4300 digits
        raise Rejected(f"not valid JSON: {str(e)[:200]}") from None
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if depth > max_depth:
            raise Rejected(f"JSON nested deeper than {max_depth} levels")
        if isinstance(v, dict):
            stack += [(x, depth + 1) for x in v.values()]
        elif isinstance(v, list):
            stack += [(x, depth + 1) for x in v]
    return _plain(value) if _SURROGATE_ESCAPE.search(text) else value


# how a surrogate appears in JSON text (valid UTF-8 has none)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
# json.loads joins an escaped pair into one character
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _plain(v: Any) -> Any:
    """``v`` with each lone surrogate in its strings replaced by U+FFFD: valid JSON, but no UTF-8
    can write it (a white-box red team's error message holding one crashed the writing of a record,
    and so the whole run)."""
    if isinstance(v, str):
        return _LONE_SURROGATE.sub("\ufffd", v)
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {_plain(k): _plain(x) for k, x in v.items()}
    return v


def _expect(cond: bool, why: str) -> None:
    if not cond:
        raise Rejected(why)


def _text(v: Any, what: str, cap: int = TEXT_CAP) -> str:
    _expect(isinstance(v, str), f"{what} is not text")
    return v if len(v) <= cap else v[:cap] + f"\n... cut: {len(v) - cap} more characters ...\n"


def _index_list(v: Any, code_cells: set[int], what: str) -> list[int]:
    _expect(isinstance(v, list) and len(v) <= len(code_cells), f"{what} is not a short list")
    _expect(
        all(type(i) is int and i in code_cells for i in v),
        f"{what} names a cell that is not a code cell",
    )
    return list(v)


def cell_outputs(message: bytes, code_cells: set[int], *, limit: int) -> dict:
    """The runner's report (autograde.inside.runner) as {"outputs": {index: [items]}, "died": [...],
    "stuck": [...]}.

    code_cells: indices of the notebook's code cells; every index reported must be one of them.
    """
    data = loads(message, limit=limit)
    _expect(
        isinstance(data, dict)
        and set(data) <= {"cells", "died", "stuck", "seconds"}
        and "cells" in data,
        "the runner's report is not an object with the expected keys",
    )
    cells = data["cells"]
    _expect(
        isinstance(cells, list) and len(cells) <= len(code_cells),
        "the runner reported too many cells",
    )
    outputs: dict[int, list[dict]] = {}
    for c in cells:
        _expect(
            isinstance(c, dict) and set(c) == {"index", "outputs"},
            "a cell report has unexpected keys",
        )
        i = c["index"]
        _expect(
            type(i) is int and i in code_cells and i not in outputs,
            "a cell report names a wrong cell",
        )
        _expect(isinstance(c["outputs"], list), "a cell's outputs are not a list")
        items = []
        for o in c["outputs"][:ITEMS_CAP]:
            _expect(isinstance(o, dict), "an output is not an object")
            if o.get("kind") == "stream" and set(o) == {"kind", "name", "text"}:
                _expect(o["name"] in ("stdout", "stderr"), "a stream has an unknown name")
                items.append(
                    {
                        "kind": "stream",
                        "name": o["name"],
                        "text": _text(o["text"], "a stream's text"),
                    }
                )
            elif o.get("kind") == "error" and set(o) == {"kind", "ename", "evalue", "traceback"}:
                items.append(
                    {
                        "kind": "error",
                        "ename": _text(o["ename"], "an error name", 200),
                        "evalue": _text(o["evalue"], "an error value", 20_000),
                        "traceback": _text(o["traceback"], "a traceback", 50_000),
                    }
                )
            else:
                raise Rejected("an output is neither a stream nor an error")
        outputs[i] = items
    return {
        "outputs": outputs,
        "died": _index_list(data.get("died", []), code_cells, "'died'"),
        "stuck": _index_list(data.get("stuck", []), code_cells, "'stuck'"),
    }


def check_outcomes(message: bytes, names: set[str], *, limit: int) -> dict[str, str]:
    """The verification child's report: {check name: outcomes JSON text}, only for the checks it was
    given.

    The outcomes text itself is decoded later by the check engine, inside ``decode_outcomes``; so
    that all of them together stay bounded, not only each one, the message is counted with its
    strings' contents (an escaped document keeps its commas and brackets): at most
    ``MESSAGE_VALUES_CAP``.
    """
    _expect(
        _count(message) <= MESSAGE_VALUES_CAP,
        f"the verification report holds more than {MESSAGE_VALUES_CAP} values in all",
    )
    data = loads(message, limit=limit)
    _expect(isinstance(data, dict), "the verification report is not an object")
    _expect(set(data) <= names, "the verification report names checks it was not given")
    _expect(all(isinstance(v, str) for v in data.values()), "a check's outcomes are not text")
    return dict(data)


def watch_records(
    side: list[bytes], names: set[str]
) -> tuple[dict[str, set[str]], dict[str, dict[str, int]]]:
    """The verification child's side records: ({check: rules its watch saw broken}
    (course_lib.checks.trace), {check: {case label: lines its counted call had run}} (a lower bound,
    engine._StepCounter)).

    A record is {"check": name, "rule": text} or {"check": name, "case": label, "steps": n}, for a
    check the child was given; a rule is cut to 300 characters (it is shown to the student as what
    their function used)."""
    seen: dict[str, set[str]] = {}
    steps: dict[str, dict[str, int]] = {}
    for record in side:
        data = loads(record, limit=SIDE_BYTES)
        _expect(
            isinstance(data, dict) and set(data) in ({"check", "rule"}, {"check", "case", "steps"}),
            "a side record has unexpected keys",
        )
        _expect(data["check"] in names, "a side record names a check it was not given")
        if "rule" in data:
            seen.setdefault(data["check"], set()).add(_text(data["rule"], "a rule", 300)[:300])
            continue
        _expect(
            type(data["steps"]) is int and 0 <= data["steps"] < 1 << 62,
            "a side record's steps are not a count",
        )
        label = _text(data["case"], "a case label", 300)[:300]
        count = steps.setdefault(data["check"], {})
        count[label] = max(count.get(label, 0), data["steps"])
    return seen, steps


def decode_outcomes(text: str, n_cases: int, *, limit: int) -> list:
    """One check's outcomes (course_lib.checks.engine.Outcome), one per case, from the child's
    text."""
    from autograde.inside.codec import outcome_from_json

    data = loads(text.encode(), limit=limit)
    _expect(isinstance(data, list), "outcomes are not a list")
    try:
        return [outcome_from_json(d) for d in data]
    except Exception as e:  # noqa: BLE001 - any failure to decode is the student's malformed output
        raise Rejected(f"unreadable outcome: {type(e).__name__}: {str(e)[:200]}") from None
