"""No new process from the answers' process once its cells may run: seccomp on every thread.

The answers' process runs the notebook's cells, so a cell can start a process, hand it the channel
to the relay (``pass_fds``) and have code the readings never see (a string given to ``python -c``)
answer the checks: white-box red team 24, E8, with ``psutil.Popen``. Listing every spawner of every
allowed library is never complete; the kernel's answer is: ``execve``/``execveat``, ``fork``,
``vfork`` and a ``clone`` without ``CLONE_THREAD`` fail with EPERM, so threads stay possible and
processes do not. ``clone3`` fails with ENOSYS, so the C library falls back to ``clone``, whose
flags a classic filter can read. Installed with TSYNC: threads that already run get it too.
"""

from __future__ import annotations

import platform
import struct

CLONE_THREAD = 0x00010000
EPERM, ENOSYS = 1, 38
# audit arch; the seccomp syscall; clone, clone3; refused: execve, execveat, fork, vfork
_ARCH = {
    "x86_64": (0xC000003E, 317, 56, 435, (59, 322, 57, 58)),
    "aarch64": (0xC00000B7, 277, 220, 435, (221, 281)),
}


def program(machine: str | None = None) -> bytes | None:
    """The filter (struct sock_filter, little-endian) for this machine, None where unknown."""
    machine = machine or platform.machine()
    if machine not in _ARCH:
        return None
    arch, _, clone, clone3, refused = _ARCH[machine]
    LD_ABS, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06
    ALLOW = 0x7FFF0000
    DENY, NOSYS = 0x00050000 | EPERM, 0x00050000 | ENOSYS
    body: list[tuple] = [
        (LD_ABS, 4, None, None),  # seccomp_data.arch
        (JEQ, arch, None, "deny"),
        (LD_ABS, 0, None, None),  # seccomp_data.nr
        (JEQ, clone3, "nosys", None),
        (JEQ, clone, "clone", None),
        *[(JEQ, n, "deny", None) for n in refused],
        (JGE, 0, "allow", "allow"),
        ("label", "clone"),
        (LD_ABS, 16, None, None),  # seccomp_data.args[0], its low 32 bits: the flags
        (JSET, CLONE_THREAD, "allow", "deny"),
        ("label", "allow"),
        (RET, ALLOW, None, None),
        ("label", "deny"),
        (RET, DENY, None, None),
        ("label", "nosys"),
        (RET, NOSYS, None, None),
    ]
    return assemble(body)


def assemble(body: list[tuple]) -> bytes:
    """Classic BPF (struct sock_filter, little-endian) from (code, k, jump if true, jump if false)
    entries whose jumps name labels (None: the next instruction), and ("label", name) entries that
    mark where a label points. The grader's sandbox filter is built with it too
    (autograde.sandbox.seccomp_program)."""
    at: dict[str, int] = {}
    insns: list[tuple] = []
    for entry in body:
        if entry[0] == "label":
            at[entry[1]] = len(insns)
        else:
            insns.append(entry)
    return b"".join(
        struct.pack("<HBBI", code, at[jt] - i - 1 if jt else 0, at[jf] - i - 1 if jf else 0, k)
        for i, (code, k, jt, jf) in enumerate(insns)
    )


def forbid_new_processes() -> bool:
    """Install the filter on every thread of this process; whether it is in place."""
    import ctypes

    machine = platform.machine()
    code = program(machine)
    if code is None:
        return False

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS: needed without CAP_SYS_ADMIN
        return False
    prog = SockFprog(len(code) // 8, code)
    seccomp = _ARCH[machine][1]
    # SECCOMP_SET_MODE_FILTER (1) with SECCOMP_FILTER_FLAG_TSYNC (1): every thread, or none
    return libc.syscall(seccomp, 1, 1, ctypes.byref(prog)) == 0
