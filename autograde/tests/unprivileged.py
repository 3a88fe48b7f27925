"""Run a command as an unprivileged user, as a grader that is not root would (for the tests only).

The grader's Python may live under /root (as on the course's CI machines, where /root is 0700), and
a checkout may sit in a 0700 folder (mktemp): the command runs in a private mount namespace in which
each such folder is a 0755 tmpfs holding only the needed entries bound back read-only, so nothing on
the host changes.
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
    """A new 0755 folder under /tmp for files the unprivileged user must read (copies of fixture
    courses)."""
    path = Path(tempfile.mkdtemp(prefix="unpriv-ro-", dir="/tmp"))
    os.chmod(path, 0o755)
    return path


def _needed() -> list[Path]:
    """What the unprivileged grader must read: the checkout (with its venv), the Python
    installation, the model."""
    import sys

    from autograde.course import REPO

    paths = [REPO, Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()]
    model = os.environ.get("COURSE_MODEL_FILE") or str(Path.home() / ".cache" / "how-llms-work")
    return paths + [Path(model).resolve()]


def _closed_ancestors(paths: list[Path]) -> dict[Path, set[str]]:
    """Topmost folders others cannot pass through (e.g. /root 0700, a mktemp checkout), with the
    children needed."""
    closed: dict[Path, set[str]] = {}
    for p in paths:
        for a in [*reversed(p.parents)][1:] + [p]:
            if a.is_dir() and not os.stat(a).st_mode & stat.S_IXOTH and a != p:
                child = p.relative_to(a).parts[0]
                closed.setdefault(a, set()).add(child)
                break
    return closed


def command(argv: list[str], env: dict[str, str]) -> list[str]:
    """argv run as UID with exactly env, in a mount namespace where every closed folder on the way
    to the checkout, the Python installation and the model is a 0755 tmpfs holding only what is
    needed, bound back read-only; nothing on the host changes."""
    setup = ["d=$(mktemp -d)"]
    for n, (folder, children) in enumerate(sorted(_closed_ancestors(_needed()).items())):
        kids = sorted(children)
        for i, c in enumerate(kids):
            setup += [
                f"mkdir $d/{n}_{i}",
                f"mount --bind {shlex.quote(str(folder / c))} $d/{n}_{i}",
            ]
        setup.append(f"mount -t tmpfs -o mode=755 tmpfs {shlex.quote(str(folder))}")
        for i, c in enumerate(kids):
            target = shlex.quote(str(folder / c))
            setup += [f"mkdir {target}", f"mount --bind -o ro $d/{n}_{i} {target}"]
    envs = " ".join(shlex.quote(f"{k}={v}") for k, v in env.items())
    run = f"exec setpriv --reuid={UID} --regid={UID} --clear-groups -- env -i {envs} " + " ".join(
        shlex.quote(a) for a in argv
    )
    return ["unshare", "--mount", "--propagation", "private", "sh", "-ec", "; ".join([*setup, run])]
