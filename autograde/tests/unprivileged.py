"""Run a command as an unprivileged user, as a grader that is not root would (for the tests only).

The grader's Python may live under /root (as on the course's CI machines, where /root is 0700): the command
runs in a private mount namespace in which /root is a 0755 tmpfs holding only /root/.pyenv and /root/.cache
bound back read-only, so nothing on the host changes; elsewhere the command runs as it is.
"""

from __future__ import annotations

import os
import shlex
import stat
import tempfile
from pathlib import Path

UID = 65534  # nobody


def shared_folder(prefix: str) -> Path:
    """A new folder under /tmp that the unprivileged user owns (its output and home go there)."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    os.chmod(path, 0o755)
    os.chown(path, UID, UID)
    return path


def readable_copy_root() -> Path:
    """A new 0755 folder under /tmp for files the unprivileged user must read (copies of fixture courses)."""
    path = Path(tempfile.mkdtemp(prefix="unpriv-ro-", dir="/tmp"))
    os.chmod(path, 0o755)
    return path


def command(argv: list[str], env: dict[str, str]) -> list[str]:
    """argv run as UID with exactly env, in a mount namespace where the root user's Python is readable."""
    setup = []
    if not os.stat("/root").st_mode & stat.S_IXOTH:
        keep = [p for p in ("/root/.pyenv", "/root/.cache") if os.path.isdir(p)]
        setup.append("d=$(mktemp -d)")
        for i, p in enumerate(keep):
            setup += [f"mkdir $d/{i}", f"mount --bind {p} $d/{i}"]
        setup.append("mount -t tmpfs -o mode=755 tmpfs /root")
        for i, p in enumerate(keep):
            setup += [f"mkdir {p}", f"mount --bind -o ro $d/{i} {p}"]
    envs = " ".join(shlex.quote(f"{k}={v}") for k, v in env.items())
    run = (f"exec setpriv --reuid={UID} --regid={UID} --clear-groups -- env -i {envs} "
           + " ".join(shlex.quote(a) for a in argv))
    return ["unshare", "--mount", "--propagation", "private", "sh", "-ec", "; ".join([*setup, run])]
