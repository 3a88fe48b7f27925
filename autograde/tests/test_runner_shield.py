"""The runner (autograde.inside.runner) shares its uid with the student's kernel: it makes itself
not dumpable, so the kernel cannot ptrace it, write its memory through /proc or take its report pipe
(an attack did all three: threat model, "Tried blind")."""

from __future__ import annotations

import ctypes
import os
import time

import pytest

from autograde.inside.runner import not_dumpable

UID = 65534


def _open_mem_of_a_sibling(shield: bool) -> bool:
    """Fork A (uid 65534, dumpable unless shielded) and B (same uid): can B open A's memory?"""
    r, w = os.pipe()
    a = os.fork()
    if a == 0:
        os.setresuid(UID, UID, UID)
        # as after an exec: dumpable (a uid change had cleared it)
        ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)
        if shield:
            not_dumpable()
        os.write(w, b"x")
        time.sleep(30)
        os._exit(0)
    os.read(r, 1)
    b = os.fork()
    if b == 0:
        os.setresuid(UID, UID, UID)
        try:
            with open(f"/proc/{a}/mem", "rb"):
                os._exit(0)
        except PermissionError:
            os._exit(1)
    _, status = os.waitpid(b, 0)
    os.kill(a, 9)
    os.waitpid(a, 0)
    return os.waitstatus_to_exitcode(status) == 0


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become two processes of another uid")
def test_a_process_of_the_same_uid_cannot_open_the_runners_memory():
    # the control: an ordinary process of the same uid can
    assert _open_mem_of_a_sibling(shield=False)
    assert not _open_mem_of_a_sibling(shield=True)  # the runner, shielded, cannot be opened
