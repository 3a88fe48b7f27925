"""The trust boundary (autograde.boundary) and the intake parsers, under generated and hostile
input.

Every parser of untrusted data is fuzzed with Hypothesis on a bounded budget (fixed seed, a few
hundred examples each, ~20 s in all): whatever the bytes, it returns a value of the promised shape
or raises `Rejected` / `InvalidNotebook` with a reason, never anything else (which would end a
grading run). The process reader is tested against children that flood, hang, keep their output
open, or lie about lengths.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from autograde import boundary
from autograde.inside.sanitize import InvalidNotebook, parse_submission

FUZZ = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=30,
)


def _mutations(value) -> st.SearchStrategy[bytes]:
    """A JSON document, then truncated, spliced or with bytes flipped."""
    raw = json.dumps(value).encode()
    return st.one_of(
        st.just(raw),
        st.integers(0, len(raw)).map(lambda n: raw[:n]),
        st.binary(max_size=40).map(lambda b: raw[: len(raw) // 2] + b + raw[len(raw) // 2 :]),
    )


@FUZZ
@given(st.one_of(st.binary(max_size=300), json_values.flatmap(_mutations)))
def test_loads_returns_json_or_rejects(data):
    try:
        boundary.loads(data, limit=10_000)
    except boundary.Rejected:
        pass


@pytest.mark.parametrize("depth", [65, 5_000, 100_000])
def test_loads_rejects_deep_nesting_without_recursing(depth):
    with pytest.raises(boundary.Rejected, match="deep"):
        boundary.loads(b"[" * depth + b"]" * depth, limit=1 << 20)


@pytest.mark.parametrize(
    "data", [b"1" * 5000, b"[-" + b"9" * 4301 + b"]", b"1e999", b'{"a": -1E400}', b"[1e309]"]
)
def test_loads_rejects_huge_numbers_and_overflowing_floats(data):
    """An integer past Python's 4300 digits raised ValueError out of loads (not Rejected: the
    grading run would have stopped); a float that overflows became inf past the NaN/Infinity
    rule."""
    with pytest.raises(boundary.Rejected):
        boundary.loads(data, limit=1 << 20)


def test_loads_rejects_nan_and_oversize():
    with pytest.raises(boundary.Rejected, match="NaN"):
        boundary.loads(b"[NaN]", limit=100)
    with pytest.raises(boundary.Rejected, match="over the limit"):
        boundary.loads(b"[" + b"1," * 100 + b"1]", limit=100)


report_items = st.one_of(
    st.fixed_dictionaries(
        {
            "kind": st.just("stream"),
            "name": st.sampled_from(["stdout", "stderr", "x"]),
            "text": st.text(max_size=30) | st.integers(),
        }
    ),
    st.fixed_dictionaries(
        {
            "kind": st.just("error"),
            "ename": st.text(max_size=10),
            "evalue": st.text(max_size=10),
            "traceback": st.text(max_size=10) | st.lists(st.text()),
        }
    ),
    json_values,
)
reports = st.fixed_dictionaries(
    {
        "cells": st.lists(
            st.fixed_dictionaries(
                {"index": st.integers(-2, 12), "outputs": st.lists(report_items, max_size=4)}
            ),
            max_size=6,
        )
    },
    optional={
        "died": st.lists(st.integers(-1, 12) | st.text(max_size=3), max_size=3),
        "stuck": st.lists(st.integers(-1, 12), max_size=3),
        "seconds": st.floats(allow_nan=False),
        "extra": json_values,
    },
)


@FUZZ
@given(
    st.one_of(
        reports.map(lambda r: json.dumps(r).encode()),
        reports.flatmap(_mutations),
        st.binary(max_size=200),
    )
)
def test_cell_outputs_accepts_only_the_runners_shape(data):
    code_cells = {1, 3, 5, 8}
    try:
        got = boundary.cell_outputs(data, code_cells, limit=100_000)
    except boundary.Rejected:
        return
    assert set(got["outputs"]) <= code_cells
    assert set(got["died"]) <= code_cells and set(got["stuck"]) <= code_cells
    for items in got["outputs"].values():
        for item in items:
            assert item["kind"] in ("stream", "error")
            assert all(isinstance(v, str) for v in item.values())


@FUZZ
@given(
    st.one_of(
        json_values.map(lambda v: json.dumps(v).encode()),
        st.dictionaries(
            st.sampled_from(["a", "b", "c"]), st.text(max_size=10) | json_values, max_size=3
        ).map(lambda d: json.dumps(d).encode()),
    )
)
def test_check_outcomes_only_for_the_checks_given(data):
    try:
        got = boundary.check_outcomes(data, {"a", "b"}, limit=100_000)
    except boundary.Rejected:
        return
    assert set(got) <= {"a", "b"} and all(isinstance(v, str) for v in got.values())


@FUZZ
@given(
    st.one_of(
        json_values.map(json.dumps),
        st.lists(
            st.dictionaries(
                st.sampled_from(
                    [
                        "label",
                        "value",
                        "error",
                        "mutated",
                        "raised",
                        "dtype",
                        "__tensor__",
                        "data",
                        "shape",
                    ]
                ),
                json_values,
                max_size=5,
            ),
            max_size=3,
        ).map(json.dumps),
        st.just(
            '[{"label": "x", "value": {"__tensor__": 1, "dtype": "float1024", "shape": [2], '
            '"data": [1, 2]}}]'
        ),
    )
)
def test_decode_outcomes_never_raises_anything_but_rejected(text):
    try:
        boundary.decode_outcomes(text, 1, limit=100_000)
    except boundary.Rejected:
        pass


@FUZZ
@given(
    st.one_of(
        st.binary(max_size=400),
        json_values.flatmap(_mutations),
        st.fixed_dictionaries(
            {
                "nbformat": st.sampled_from([4, 3, 5, "4", None]),
                "cells": st.lists(json_values, max_size=4) | json_values,
            },
            optional={"metadata": json_values},
        ).flatmap(_mutations),
    )
)
def test_the_submission_parser_reads_a_notebook_or_says_why(raw):
    try:
        cells = parse_submission(raw)
    except InvalidNotebook as e:
        assert str(e)
        return
    assert all(
        c["cell_type"] in ("code", "markdown", "raw") and isinstance(c["source"], str)
        for c in cells
    )


# ------------------------------------------------------------------------------------ files and
# processes
def test_read_submission_takes_only_plain_files_within_the_cap(tmp_path):
    good = tmp_path / "nb.ipynb"
    good.write_bytes(b"{}")
    assert boundary.read_submission(good, 10) == b"{}"
    with pytest.raises(boundary.Rejected, match="over the limit"):
        boundary.read_submission(good, 1)
    (tmp_path / "link").symlink_to(good)
    (tmp_path / "zero").symlink_to("/dev/zero")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    for name in ("link", "zero", "fifo", "dir", "absent"):
        t0 = time.monotonic()
        with pytest.raises(boundary.Rejected):
            boundary.read_submission(tmp_path / name, 1 << 20)
        assert time.monotonic() - t0 < 5  # a FIFO must not block
    # refused without being opened for writing
    assert stat.S_ISFIFO(os.lstat(tmp_path / "fifo").st_mode)


def _child(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_run_reads_one_framed_message_and_stops_the_sender():
    code = (
        "import os, threading, time, sys\n"
        # would block interpreter exit
        "threading.Thread(target=lambda: time.sleep(600)).start()\n"
        "os.write(1, b'5\\nhello')\n"
        "time.sleep(600)\n"
    )
    t0 = time.monotonic()
    done = boundary.run(_child(code), b"", limit=100, deadline_s=60)
    assert done.message == b"hello" and time.monotonic() - t0 < 30


def test_run_stops_a_flood_and_a_sleeper_at_the_deadline():
    t0 = time.monotonic()
    for head in (b"", b"999999\\n"):  # no length, or one over the cap: refused without reading on
        with pytest.raises(boundary.Rejected):
            boundary.run(
                _child(
                    f"import os\nos.write(1, b'{head.decode()}')\nwhile True: os.write(1, b'x' * "
                    "65536)"
                ),
                b"",
                limit=1000,
                deadline_s=60,
            )
    assert time.monotonic() - t0 < 30
    sleeper = boundary.run(_child("import time; time.sleep(600)"), b"", limit=100, deadline_s=1.5)
    assert sleeper.timed_out and sleeper.message is None


@pytest.mark.parametrize("header", [b"abc\n", b"x" * 40, b"99999999999\nxx"])
def test_run_rejects_a_message_without_a_valid_length(header):
    code = f"import os, time\nos.write(1, {header!r})\ntime.sleep(30)"
    with pytest.raises(boundary.Rejected):
        boundary.run(_child(code), b"", limit=1000, deadline_s=20)


def test_run_feeds_large_input_while_reading():
    code = (
        "import sys, os\ndata = sys.stdin.buffer.read()\nos.write(1, b'%d\\n' % len(data[:10]) "
        "+ data[:10])"
    )
    done = boundary.run(_child(code), b"y" * (8 << 20), limit=100, deadline_s=60)
    assert done.message == b"y" * 10


def test_run_holds_back_the_second_input_until_the_first_message_is_in():
    # The child reads its first input, waits 1 s and looks for more on its standard input (nothing
    # may be there yet), reports that, then reads the second input (which must come now) and echoes
    # it.
    code = (
        "import os, select, sys, time\n"
        "first = os.read(0, 6)\n"
        "time.sleep(1.0)\n"
        "early = bool(select.select([0], [], [], 0)[0])\n"
        "msg = first + (b' early' if early else b' clean')\n"
        "os.write(1, b'%d\\n' % len(msg) + msg)\n"
        "rest = os.read(0, 100)\n"
        "os.write(1, b'%d\\n' % len(rest) + rest)\n"
    )
    done = boundary.run(_child(code), b"first!", limit=100, deadline_s=60, then=b"second")
    assert done.first == b"first! clean" and done.message == b"second"
    # control: the same bytes sent at once are there before the first message
    both = boundary.run(_child(code), b"first!second", limit=100, deadline_s=60)
    assert both.message == b"first! early"


@settings(max_examples=30, deadline=None, derandomize=True)
@seed(7)
@given(st.binary(max_size=64))
def test_run_never_raises_on_arbitrary_output(out):
    code = f"import os\nos.write(1, {out!r})"
    try:
        done = boundary.run(_child(code), b"", limit=1000, deadline_s=20)
    except boundary.Rejected:
        return
    assert done.message is None or len(done.message) <= 1000


side_records = st.fixed_dictionaries(
    {"check": st.sampled_from(["softmax", "entropy", "*", "other"]), "rule": st.text(max_size=400)}
)
step_records = st.fixed_dictionaries(
    {
        "check": st.sampled_from(["softmax", "other"]),
        "case": st.text(max_size=40),
        "steps": st.one_of(st.integers(-5, 2**64), st.floats(), st.text(max_size=3)),
    }
)


@FUZZ
@given(
    st.lists(
        st.one_of(
            step_records.map(lambda r: json.dumps(r).encode()), step_records.flatmap(_mutations)
        ),
        max_size=6,
    )
)
def test_step_records_give_the_largest_count_per_case_or_reject(records):
    try:
        seen, counted = boundary.watch_records(records, {"softmax"})
    except boundary.Rejected:
        return
    assert seen == {} and set(counted) <= {"softmax"}
    good = [json.loads(r) for r in records]
    # a lone surrogate (valid JSON, no UTF-8 text) comes back as U+FFFD, one character for one
    plain = lambda s: "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in s)  # noqa: E731
    for label, n in counted.get("softmax", {}).items():
        assert n == max(g["steps"] for g in good if plain(g["case"][:300]) == label)
        assert type(n) is int and 0 <= n < 1 << 62


@FUZZ
@given(
    st.lists(
        st.one_of(
            side_records.map(lambda r: json.dumps(r).encode()),
            side_records.flatmap(_mutations),
            st.binary(max_size=80),
        ),
        max_size=6,
    )
)
def test_watch_records_give_known_checks_and_short_rules_or_reject(records):
    try:
        seen, counted = boundary.watch_records(records, {"softmax", "entropy", "*"})
    except boundary.Rejected:
        return
    assert set(seen) <= {"softmax", "entropy", "*"} and counted == {}
    assert all(isinstance(r, str) and len(r) <= 300 for rules in seen.values() for r in rules)
    # every record was read: as many (check, rule) pairs as distinct well-formed records
    assert sum(map(len, seen.values())) == len(
        {(json.loads(r)["check"], json.loads(r)["rule"][:300]) for r in records}
    )


@FUZZ
@given(st.lists(st.binary(max_size=60), max_size=5), st.binary(max_size=40))
def test_side_records_are_split_off_the_message_whatever_they_hold(payloads, message):
    """Side records before and between the message's bytes never change the message; malformed ones
    reject."""
    buf = bytearray(b"".join(boundary.side_frame(p) for p in payloads) + boundary.frame(message))
    side: list[bytes] = []
    boundary.read_side_records(buf, side)
    assert side == payloads and boundary.peek_message(buf, 1000) == message


def _feed(stream: bytes, cuts: list[int], limit: int) -> tuple[list[bytes], list[bytes]]:
    """The relay's reading (autograde.inside.relay._relay): the stream arrives in pieces cut at
    ``cuts``; every reply taken as soon as it is whole. Returns (side records, messages) in
    order."""
    buf, side, messages = bytearray(), [], []
    points = sorted({min(max(c, 0), len(stream)) for c in cuts} | {len(stream)})
    start = 0
    for end in points:
        buf.extend(stream[start:end])
        start = end
        while True:
            got, message = boundary.take_reply(buf, limit)
            side += got
            assert len(buf) <= limit + 32 + len(stream)  # what stays is bounded by what came
            if message is None:
                break
            messages.append(message)
    return side, messages


replies = st.lists(
    st.tuples(st.lists(st.binary(max_size=40), max_size=3), st.binary(max_size=60)), max_size=4
)


@FUZZ
@given(replies, st.lists(st.integers(0, 2000), max_size=8))
def test_the_relay_reads_well_formed_replies_exactly_however_they_arrive(parts, cuts):
    """A differential test of the relay's reader against the writer: side records and messages come
    back as written, in order, whatever pieces the socket delivers them in."""
    stream = b"".join(
        b"".join(boundary.side_frame(r) for r in records) + boundary.frame(m)
        for records, m in parts
    )
    side, messages = _feed(stream, cuts, 1000)
    assert side == [r for records, _ in parts for r in records] and messages == [
        m for _, m in parts
    ]


@FUZZ
@given(
    st.one_of(
        st.binary(max_size=300),
        replies.flatmap(
            lambda parts: _mutations_of(
                b"".join(
                    b"".join(boundary.side_frame(r) for r in records) + boundary.frame(m)
                    for records, m in parts
                )
            )
        ),
    ),
    st.lists(st.integers(0, 400), max_size=6),
)
def test_the_relay_reader_returns_records_or_rejects_whatever_the_answers_process_writes(
    stream, cuts
):
    """Anything the answers' process writes: whole records and messages within their caps, or
    Rejected."""
    try:
        side, messages = _feed(stream, cuts, 100)
    except boundary.Rejected:
        return
    assert all(len(r) <= boundary.SIDE_BYTES for r in side) and all(len(m) <= 100 for m in messages)


def _mutations_of(raw: bytes) -> st.SearchStrategy[bytes]:
    return st.one_of(
        st.just(raw),
        st.integers(0, len(raw)).map(lambda n: raw[:n]),
        st.binary(max_size=20).map(lambda b: raw[: len(raw) // 2] + b + raw[len(raw) // 2 :]),
    )


def test_the_relay_refuses_a_reply_over_its_limit_before_it_is_whole():
    buf = bytearray(b"%d\n" % (boundary.FRAME_CAP + 1))
    with pytest.raises(boundary.Rejected, match="over the limit"):
        boundary.take_reply(buf, 64 << 20)  # a caller's larger limit is still capped at FRAME_CAP
    buf = bytearray(b"w5\nab")
    # a record not whole yet waits
    assert boundary.take_reply(buf, 100) == ([], None) and buf == b"w5\nab"


def test_run_collects_side_records_and_refuses_a_flood_of_them():
    code = (
        "import os\n"
        "os.write(1, b'w3\\nabc')\n"
        # side records only between whole messages: the child writes them so
        "os.write(1, b'5\\nhel')\n"
        "os.write(1, b'lo')\n"
    )
    done = boundary.run(_child(code), b"", limit=100, deadline_s=60)
    assert done.side == [b"abc"] and done.message == b"hello"
    flood = (
        f"import os\nfor _ in range({boundary.SIDE_COUNT + 1}):\n    os.write(1, "
        "b'w1\\nx')\nos.write(1, b'2\\nok')"
    )
    with pytest.raises(boundary.Rejected, match="side records"):
        boundary.run(_child(flood), b"", limit=100, deadline_s=60)
    with pytest.raises(boundary.Rejected, match="side record"):
        boundary.run(
            _child(f"import os\nos.write(1, b'w{boundary.SIDE_BYTES + 1}\\n')"),
            b"",
            limit=100,
            deadline_s=60,
        )


# ----------------------------------------------------------------- objects counted before they are
# built (issue 37)
def _values(v) -> int:
    """Values and keys in a parsed document (what count_values bounds)."""
    if isinstance(v, dict):
        return 1 + len(v) + sum(_values(x) for x in v.values())
    if isinstance(v, list):
        return 1 + sum(_values(x) for x in v)
    return 1


tricky_text = st.text(alphabet=st.sampled_from('ab,[]{}:"\\\n\u00e9\U0001f600'), max_size=12)
tricky_values = st.recursive(
    st.none() | st.integers(-5, 5) | tricky_text,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(tricky_text, inner, max_size=4),
    max_leaves=40,
)


@FUZZ
@given(tricky_values, st.booleans())
def test_values_are_counted_from_the_bytes_at_least_as_many_as_parsed(value, ascii_only):
    """count_values is an upper bound on the values a document parses to, whatever its strings hold
    (brackets, commas, quotes, escapes); with the strings taken out it is at most 3n for n values (n
    - 1 commas, n brackets, n colons at most), so loads parses a document under a cap of 3n, and
    refuses it under a cap of n - 1."""
    data = json.dumps(value, ensure_ascii=ascii_only).encode()
    n = _values(value)
    assert boundary.count_values(data, cap=1 << 40) >= n
    assert boundary.loads(data, limit=1 << 20, max_values=3 * n) == value
    with pytest.raises(boundary.Rejected, match="values"):
        boundary.loads(data, limit=1 << 20, max_values=n - 1)


@FUZZ
@given(st.binary(max_size=300) | st.text(alphabet='"\\[],{}a', max_size=300).map(str.encode))
def test_counting_any_bytes_returns_a_count_or_rejects(data):
    try:
        assert boundary.count_values(data, cap=50) <= 50
    except boundary.Rejected:
        pass


def test_counting_is_linear_on_unterminated_strings():
    """A run of escaped quotes inside an unterminated string (no match must ever be retried from
    each quote)."""
    t0 = time.monotonic()
    for data in (b'"' + b'\\"' * 3_000_000, b'"' * 6_000_001, b'["' + b"\\\\" * 3_000_000):
        with pytest.raises(boundary.Rejected):
            boundary.loads(data, limit=1 << 30, max_values=10)
    assert time.monotonic() - t0 < 10


def test_all_outcomes_of_one_report_together_are_counted():
    """Each outcomes document may hold VALUES_CAP values; five of them in one report pass the
    report's own cap, counted with its strings' contents, and are refused before parsing. Control:
    one of them is accepted."""
    doc = json.dumps([0] * (boundary.VALUES_CAP - 10))
    names = {f"c{i}" for i in range(5)}
    one = json.dumps({"c0": doc}).encode()
    assert len(boundary.check_outcomes(one, names, limit=64 << 20)) == 1
    with pytest.raises(boundary.Rejected, match="values in all"):
        boundary.check_outcomes(json.dumps({n: doc for n in names}).encode(), names, limit=64 << 20)


_PARSE = """
import sys
from autograde import boundary
def status(key):
    return int(open("/proc/self/status").read().split(key + ":")[1].split()[0]) >> 10  # MB
data = b"[" + b"[[]]," * (int(sys.argv[1]) // 5) + b"[]]"  # nested empty lists: the red team's frame
open("/proc/self/clear_refs", "w").write("5")  # the peak (VmHWM) starts again from here
before = status("VmRSS")
try:
    boundary.loads(data, limit=64 << 20, max_values=int(sys.argv[2])); out = "parsed"
except boundary.Rejected:
    out = "rejected"
print(out, status("VmHWM") - before)
"""  # noqa: E501


def test_a_frame_of_nested_empty_lists_is_refused_before_it_costs_memory():
    """Issue 37: a forged 60 MB frame of nested empty lists became a 3.6 GB peak in the grader
    (limits counted bytes). Parsed in a child: refused, with its peak resident memory grown by less
    than 50 MB past the frame itself. Control: a twentieth of it (3 MB) parsed with no value cap
    grows the peak by more than 100 MB."""

    def parse(size: int, cap: int) -> list[str]:
        r = subprocess.run(
            [sys.executable, "-c", _PARSE, str(size), str(cap)],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": str(Path(boundary.__file__).parents[1])},
        )
        return r.stdout.split() or [r.stderr[-2000:]]

    refused = parse(60_000_000, boundary.VALUES_CAP)
    assert refused[0] == "rejected" and int(refused[1]) < 50, refused
    control = parse(3_000_000, 1 << 40)
    assert control[0] == "parsed" and int(control[1]) > 100, control


def test_no_message_is_read_past_the_frame_cap_whatever_the_caller_asks():
    announce = (
        f"import os, time\nos.write(1, b'{boundary.FRAME_CAP + 1}\\n' + b'x' * 100)\ntime.sleep(30)"
    )
    with pytest.raises(boundary.Rejected, match=f"over the limit of {boundary.FRAME_CAP}"):
        boundary.run(_child(announce), b"", limit=64 << 20, deadline_s=20)
    fits = (
        f"import os, time\nos.write(1, b'{boundary.FRAME_CAP}\\n' + b'x' * "
        f"{boundary.FRAME_CAP})\ntime.sleep(30)"
    )
    assert (
        len(boundary.run(_child(fits), b"", limit=64 << 20, deadline_s=60).message)
        == boundary.FRAME_CAP
    )


def test_limit_memory_turns_a_runaway_allocation_into_a_memory_error():
    """The grader's own backstop (RLIMIT_DATA): 512 MB asked of a process held to 256 MB fails in
    that process. Control: the same allocation without the limit succeeds."""
    code = (
        "import sys\nfrom autograde import boundary\n"
        "if sys.argv[1] == 'limit': boundary.limit_memory(256 << 20)\n"
        "try:\n    x = bytearray(512 << 20); print('allocated')\nexcept MemoryError:\n    "
        "print('MemoryError')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(boundary.__file__).parents[1])}
    got = [
        subprocess.run(
            [sys.executable, "-c", code, how], capture_output=True, text=True, timeout=60, env=env
        ).stdout.strip()
        for how in ("limit", "none")
    ]
    assert got == ["MemoryError", "allocated"]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    st.lists(
        st.lists(
            st.one_of(
                st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, categories=["Cs"]),
                # text() drops Cs
                st.characters(),
            ),
            max_size=12,
        ).map("".join),
        max_size=6,
    )
)
def test_text_from_a_sandbox_is_always_writable_as_utf8(texts):
    """A lone surrogate is valid JSON but no UTF-8 can write it: a white-box red team's error
    message holding one crashed the writing of a record, and so the whole run. What loads returns
    always encodes, valid pairs and every other character kept, each lone surrogate replaced by
    U+FFFD."""
    got = boundary.loads(json.dumps({t: t for t in texts}).encode(), limit=1 << 20)
    for key, value in got.items():
        (key + value).encode("utf-8")  # raises on a lone surrogate
    # JSON joins an escaped surrogate pair into one character, as UTF-16 does
    want = {t.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace") for t in texts}
    assert set(got) == want and all(k == v for k, v in got.items())


def test_numbers_built_to_share_a_hash_are_refused_before_a_set_or_dict_is_built():
    """Python's hash of an int is fixed: every multiple of 2**61 - 1 hashes to 0, so a set, a dict
    or a comparator's set(...) of n of them costs O(n^2) (a white-box red team's 10^6-element `$set`
    result hung the trusted grader). Outcomes holding more than HASH_SHARED_MAX distinct numbers
    with one hash are refused as that check's unreadable outcomes; an honest vocabulary-sized set
    passes."""
    from autograde.inside.codec import HASH_SHARED_MAX, outcome_from_json

    m = (1 << 61) - 1
    flood = [m * k for k in range(1, 100_001)]
    assert len({hash(v) for v in flood}) == 1  # the control: they do collide
    for value in ({"$set": flood}, flood, {"$dict": [[v, 0] for v in flood]}, [[v] for v in flood]):
        with pytest.raises(boundary.Rejected, match="share one hash"):
            boundary.decode_outcomes(
                json.dumps([{"label": "x", "value": value}]), 1, limit=64 << 20
            )
    few = flood[:HASH_SHARED_MAX]  # a few collisions cost nothing: not refused
    assert outcome_from_json({"label": "x", "value": {"$set": few}}).value == set(few)
    honest = list(range(49152))
    assert outcome_from_json({"label": "x", "value": {"$set": honest}}).value == set(honest)


def _tuples_sharing_a_hash(n: int, seed: int = 0) -> list[tuple[int, int]]:
    """n pairs (x, y) of ints with distinct hashes whose tuples all share one hash: CPython's tuple
    hash (xxHash's round over the items' hashes, Objects/tupleobject.c) inverted for y's lane; the
    caller checks with hash()."""
    import random

    mask, mod = (1 << 64) - 1, (1 << 61) - 1
    p1, p2, p5 = 11400714785074694791, 14029467366897019727, 2870177450012600261

    def rnd(acc: int, lane: int) -> int:
        acc = (acc + lane * p2) & mask
        return ((((acc << 31) | (acc >> 33)) & mask) * p1) & mask

    target = 0x5EED
    before_len = (target - (2 ^ (p5 ^ 3527539))) & mask  # the final step adds len ^ (p5 ^ 3527539)
    x_inv = (before_len * pow(p1, -1, 1 << 64)) & mask
    wanted = ((x_inv >> 31) | (x_inv << 33)) & mask  # the accumulator before its last rotation
    out, r = [], random.Random(seed)
    while len(out) < n:
        x = r.randrange(1, mod)
        hy = ((wanted - rnd(p5, x)) * pow(p2, -1, 1 << 64)) & mask
        y = hy if hy < mod else hy - (1 << 64) if hy > mask - mod + 1 else None
        if y is not None and y != -1:
            out.append((x, y))
    return out


def test_tuples_built_to_share_a_hash_are_refused_though_their_items_do_not():
    """White-box red team 22 (C2): a `$set` of tuples whose items have distinct hashes but whose
    tuples share one (CPython's tuple hash is computed from its items', so it can be solved for)
    cost the trusted grader minutes to build (O(n^2)); the count of values sharing a hash now covers
    tuples and frozensets. Controls: the pairs do collide, their items do not, and as many pairs
    with random items pass."""
    import random

    from autograde.inside.codec import HASH_SHARED_MAX, outcome_from_json

    pairs = _tuples_sharing_a_hash(2_000)
    assert len({hash(t) for t in pairs}) == 1 and len({hash(x) for x, _ in pairs}) == len(pairs)
    encoded = {"$set": [{"$tuple": [x, y]} for x, y in pairs]}
    for value in (
        encoded,
        {"$dict": [[{"$tuple": [x, y]}, 0] for x, y in pairs]},
        [{"$tuple": [x, y]} for x, y in pairs],
    ):
        with pytest.raises(boundary.Rejected, match="share one hash"):
            boundary.decode_outcomes(
                json.dumps([{"label": "x", "value": value}]), 1, limit=64 << 20
            )
    few = {"$set": [{"$tuple": [x, y]} for x, y in pairs[:HASH_SHARED_MAX]]}
    assert len(outcome_from_json({"label": "x", "value": few}).value) == HASH_SHARED_MAX
    r = random.Random(1)
    plain = {
        "$set": [{"$tuple": [r.randrange(1 << 60), r.randrange(1 << 60)]} for _ in range(2_000)]
    }
    assert len(outcome_from_json({"label": "x", "value": plain}).value) == 2_000


def test_a_dtype_name_from_a_sandbox_is_looked_up_among_torchs_dtypes_only():
    """White-box red team 21: a forged outcome's dtype "_dynamo" made the grader run getattr(torch,
    "_dynamo"), importing that submodule (1.75 s, +60 MB) in the trusted process. Names are now
    looked up among torch's dtypes: every dtype round-trips, any other name is refused and imports
    nothing."""
    import subprocess

    import torch

    from autograde.inside.codec import decode, encode

    for dtype in (
        torch.float32,
        torch.float64,
        torch.float16,
        torch.bfloat16,
        torch.int64,
        torch.bool,
        torch.uint8,
    ):
        x = torch.zeros(2, dtype=dtype)
        assert decode(encode(x)).dtype == dtype
        assert decode(encode(x.to("meta"))).dtype == dtype
    probe = (
        "import sys, torch\nfrom autograde.inside.codec import decode\n"
        "for name in ('_dynamo', 'Tensor', 'float'):\n"
        "    try:\n        decode({'$meta': {'dtype': name, 'shape': [1]}})\n        "
        "print('ACCEPTED', name)\n"
        "    except ValueError:\n        pass\nprint('torch._dynamo' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        check=True,
    ).stdout
    assert out.split() == ["False"], out


def test_a_sandbox_process_ends_when_nothing_reads_its_pipe_any_more():
    """Seen in session 23: a grader stopped with SIGTERM left a verification sandbox running,
    reparented to init. The relay and the runner (each its sandbox's first process) now end when
    the grader's end of their pipe closes. Truth: the child would sleep 60 s and exit 0; it exits 1
    (the watch fired) once the reading end is closed."""
    import subprocess
    import sys

    from autograde.course import REPO

    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import time\nfrom autograde.inside import wire\nwire.end_with_reader(1)\n"
            "print('ready', flush=True)\ntime.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        cwd=REPO,
    )
    assert child.stdout.readline() == b"ready\n"
    child.stdout.close()
    assert child.wait(timeout=50) == 1
