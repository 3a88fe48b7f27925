"""A sandbox for student code, built from what Linux gives directly (no Docker engine exists here).

`wrap(argv, ...)` returns a command line that runs argv:
- in new pid, ipc and uts namespaces (and a new network namespace unless the policy allows the network),
  through bubblewrap (Debian's `bubblewrap`): when the sandbox's first process ends, the kernel kills every
  process it started, so nothing outlives the grading run; `os.kill` can reach no process outside it;
- in a new mount namespace that shows only the system's read-only folders (/usr, /lib, /etc, ...), the Python
  installation and the packages the kernel needs (read-only), and one writable scratch folder; the course's
  solutions, the gradebook, other students' submissions and /root are simply not there;
- as an unprivileged user (a uid of its own, no capabilities, no_new_privs), with rlimits on address space,
  processes (counted per uid, hence a uid per concurrent sandbox), file size and CPU time.

What it does not protect against: a kernel exploit, a side channel (timing, /proc/cpuinfo), and resource use
below the limits (a student can still use its whole CPU and memory allowance).

The grader is root here (and in CI). A grader that is not root cannot switch users: it gets `unavailable()`'s
reason and must say so rather than grade unsandboxed (issue 10 covers unprivileged user namespaces).
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/etc")
FIRST_UID = 61000  # sandbox uids: FIRST_UID + slot; unused by Debian's system and login ranges
# A Unix socket's path has at most 107 bytes, and a job folder under a long OUT has more: a kernel's sockets
# live in a short folder of their own under this one.
SOCKET_BASE = Path("/tmp/autograde-sockets")


@dataclass(frozen=True)
class Policy:
    """Limits of one sandboxed process tree."""

    memory_bytes: int = 4 << 30  # address space (RLIMIT_AS); torch alone maps ~1.5 GB of it
    max_processes: int = 64  # RLIMIT_NPROC for the sandbox's uid: a fork bomb stops here
    file_bytes: int = 256 << 20  # largest file it may write (RLIMIT_FSIZE)
    cpu_seconds: int = 900  # CPU time (RLIMIT_CPU), a backstop behind the harness's wall clock
    network: bool = False  # a kernel talking to its client over TCP loopback needs the host's network


def unavailable() -> str | None:
    """None if sandboxes can be made here, else the reason they cannot."""
    for tool in ("bwrap", "setpriv", "prlimit"):
        if shutil.which(tool) is None:
            return f"`{tool}` not found: install Debian's bubblewrap and util-linux (apt-get install bubblewrap)"
    if os.geteuid() != 0:
        return ("the grader is not root, and the sandbox needs root to run each student's code as a user of its "
                "own (uid 61000 + slot): start the grader, or its Dask workers, as root")
    return None


def python_paths() -> list[Path]:
    """Folders this interpreter needs: its installation and its environment's packages (resolved links)."""
    paths = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve(), Path(sys.executable).resolve().parent}
    return sorted(paths)


def _parents(path: Path) -> list[Path]:
    return [p for p in reversed(path.parents) if p != Path("/")]


def wrap(argv: list[str], *, writable: Path, readonly: list[Path], policy: Policy = Policy(), slot: int = 0,
         chdir: Path | None = None, env: dict[str, str] | None = None, hide: list[Path] = (),
         binds: list[Path] = ()) -> list[str]:
    """The command that runs argv in a sandbox (see the module docstring); writable is its home folder.

    hide: folders inside the read-only mounts that the sandbox must not see (an empty tmpfs covers each).
    binds: further writable folders (e.g. where a kernel's connection sockets live).
    """
    reason = unavailable()
    if reason:
        raise RuntimeError(f"cannot sandbox student code: {reason}")
    uid = FIRST_UID + slot
    cmd = ["bwrap", "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
           "--unshare-cgroup-try", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP"]
    if not policy.network:
        cmd.append("--unshare-net")
    for d in SYSTEM_DIRS:
        if os.path.exists(d):
            cmd += ["--ro-bind", d, d]
    cmd += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp"]
    made: set[Path] = set()
    mounts = ([(Path(p), "--ro-bind") for p in [*python_paths(), *readonly]]
              + [(Path(p), "--bind") for p in [writable, *binds]])
    for path, how in mounts:
        # bwrap makes missing parent folders 0700 (unreadable to the sandbox user): make them 0755 ourselves.
        for parent in _parents(path):
            if parent not in made and not any(str(parent).startswith(d + "/") or str(parent) == d for d in SYSTEM_DIRS):
                cmd += ["--perms", "0755", "--dir", str(parent)]
                made.add(parent)
        cmd += [how, str(path), str(path)]
    for path in hide:
        if Path(path).is_dir():
            cmd += ["--tmpfs", str(path)]
    cmd += ["--chdir", str(chdir or writable), "--clearenv"]
    for key, value in (env or {}).items():
        cmd += ["--setenv", key, value]
    cmd += ["--setenv", "HOME", str(writable), "--setenv", "TMPDIR", "/tmp", "--setenv", "PATH",
            f"{Path(sys.executable).parent}:/usr/bin:/bin"]
    cmd += ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs",
            "--inh-caps=-all", "--bounding-set=-all", "--"]
    cmd += ["prlimit", f"--as={policy.memory_bytes}", f"--nproc={policy.max_processes}",
            f"--fsize={policy.file_bytes}", f"--cpu={policy.cpu_seconds}", "--core=0", "--"]
    return cmd + list(argv)


def _shared_folders() -> set[Path]:
    import tempfile
    return {Path(p).resolve() for p in ("/", tempfile.gettempdir(), "/tmp", "/var/tmp", "/dev/shm", Path.home(),
                                         "/root", "/home", "/work", *SYSTEM_DIRS) if os.path.exists(p)}


def socket_folder() -> Path:
    """A new, empty folder for one job's Unix sockets, at a short path (the caller removes it)."""
    import tempfile
    SOCKET_BASE.mkdir(mode=0o711, exist_ok=True)  # sandbox users may pass through it, not list it
    st = SOCKET_BASE.lstat()
    if st.st_uid != os.geteuid() or not SOCKET_BASE.is_dir() or SOCKET_BASE.is_symlink():
        raise RuntimeError(f"{SOCKET_BASE} is not a folder of this grader's own: remove it")
    return Path(tempfile.mkdtemp(prefix="k", dir=SOCKET_BASE))


def prepare_writable(path: Path, slot: int = 0) -> None:
    """Make path a folder the sandbox user of this slot owns (it starts empty or with copies we made).

    Refuses shared folders (/, the temporary folder, home, system folders): handing one of those to a
    sandbox user would give it everyone's files (and lock other programs out of them).
    """
    resolved = Path(path).resolve()
    if resolved in _shared_folders() or len(resolved.parts) < 4:
        raise ValueError(f"refusing to give {resolved} to a sandbox user: not a folder of the grading job's own")
    path.mkdir(parents=True, exist_ok=True)
    uid = FIRST_UID + slot
    for p in [path, *path.rglob("*")]:
        os.chown(p, uid, uid, follow_symlinks=False)
