"""The format both sides of the trust boundary speak: framed messages and side records.

A process in a sandbox (or a limited child) writes one framed message (``frame``: the length in
decimal, a newline, the bytes) and, before it, small side records (``side_frame``). The grader reads
them with autograde.boundary.run; the verification relay (autograde.inside.relay) reads the answers'
process's replies with ``take_reply``: both with the readers here (``read_side_records``,
``peek_message``), so the two readings cannot drift.

With cells and codec, the only modules of autograde.inside that the trusted side imports besides the
entry points' names (autograde/tests/test_layout.py): standard library only, pure functions of
bytes.
"""

from __future__ import annotations

# bytes of one message from a sandbox, whatever a caller asks (autograde.boundary: why)
FRAME_CAP = 16 << 20
# the check name of a side record saying that the notebook changed the checks themselves
TAMPERED = "*"


class Rejected(ValueError):
    """Untrusted input that does not have the expected form; str(e) is the one-line reason."""


def frame(payload: bytes) -> bytes:
    """How a sandbox sends its one message: the length in decimal, a newline, the bytes."""
    return b"%d\n" % len(payload) + payload


SIDE_BYTES = 1024  # one side record
SIDE_COUNT = 512  # side records per process


def side_frame(payload: bytes) -> bytes:
    """A side record: "w", the length in decimal, a newline, the bytes (read apart from the
    message)."""
    return b"w%d\n" % len(payload) + payload


def read_side_records(buf: bytearray, side: list[bytes]) -> None:
    """Move every whole side record at the start of buf into side."""
    while buf[:1] == b"w":
        head, sep, _ = bytes(buf[1:24]).partition(b"\n")
        if not sep:
            if len(buf) >= 24:
                raise Rejected("a side record of the sandbox's output does not start with a length")
            return
        if not head.isdigit() or int(head) > SIDE_BYTES:
            raise Rejected("a side record of the sandbox's output has no valid length")
        start = len(head) + 2
        if len(buf) < start + int(head):
            return
        if len(side) >= SIDE_COUNT:
            raise Rejected(f"the sandbox sent more than {SIDE_COUNT} side records")
        side.append(bytes(buf[start : start + int(head)]))
        del buf[: start + int(head)]


def peek_message(buf: bytearray, limit: int) -> bytes | None:
    head, sep, _ = bytes(buf[:24]).partition(b"\n")
    if not sep:
        if len(buf) >= 24:
            raise Rejected("the sandbox's output does not start with a length")
        return None
    if not head.isdigit() or int(head) > limit:
        raise Rejected(
            "the sandbox's output has no valid length"
            if not head.isdigit()
            else f"the sandbox announced {int(head)} bytes, over the limit of {limit}"
        )
    n, start = int(head), len(head) + 1
    return bytes(buf[start : start + n]) if len(buf) >= start + n else None


def take_reply(buf: bytearray, limit: int) -> tuple[list[bytes], bytes | None]:
    """What the verification relay reads from the answers' process (autograde.inside.relay): the
    whole side records at the start of ``buf``, then its framed message if it is whole; both are
    removed from ``buf``. Raises ``Rejected`` as the grader's reader does (autograde.boundary.run):
    a bad length, a message over ``limit``, at most ``FRAME_CAP``."""
    limit = min(limit, FRAME_CAP)
    side: list[bytes] = []
    read_side_records(buf, side)
    if buf[:1] == b"w":
        return side, None  # a side record not whole yet
    message = peek_message(buf, limit)
    if message is not None:
        del buf[: len(bytes(buf[:24]).partition(b"\n")[0]) + 1 + len(message)]
    elif len(buf) > limit + 32:
        raise Rejected(f"the answers' process sent more than {limit} bytes for one check")
    return side, message


def end_with_reader(fd: int) -> None:
    """End this process when nothing reads ``fd`` any more (a pipe to the grader whose reading end
    closed: the grader was stopped or killed). A sandbox's first process holds the grader's pipes;
    without this, a grader stopped with SIGTERM left the verification sandbox running (its cells
    and calls under their own limits only, minutes each). The first process of a pid namespace
    ending ends every process in it."""
    import os
    import select
    import threading

    def watch() -> None:
        poller = select.poll()
        poller.register(fd, 0)  # POLLERR and POLLHUP are always reported
        while True:
            for _, events in poller.poll():
                if events & (select.POLLERR | select.POLLHUP | select.POLLNVAL):
                    os._exit(1)

    threading.Thread(target=watch, name="autograde-reader-watch", daemon=True).start()
