"""A sandbox for student code, built from what Linux gives directly (no Docker engine exists here).

`wrap(argv, ...)` returns a command line that runs argv through bubblewrap (Debian's `bubblewrap`):
- in new pid, ipc, uts and network namespaces: when the sandbox's first process ends, the kernel
kills every
  process it started, threads included, so nothing outlives it; it can signal no process outside;
- in a new mount namespace built from nothing: the system's read-only folders (/usr, /lib, /etc,
...), the
  Python installation (read-only), and the files the caller names (read-only). Nothing of the host
  is writable: /tmp and $HOME are private tmpfs folders of a fixed size, and what the sandbox
  produces leaves it only through its standard output, read by the grader with a size cap and a
  deadline (autograde.boundary);
- as an unprivileged user with no capabilities and rlimits on address space, processes, open files,
file size
  and CPU;
- under a seccomp filter that refuses the kernel key store and the calls that evict or read
page-cache
  residency (see BLOCKED_SYSCALLS): kernel state shared across these namespaces that a sandbox could
  write and a later one read; and the memory that no process's RSS shows (memfd_create, shmget,
  socket buffers set past the default).

Two ways to be an unprivileged user of its own, chosen by who the grader is:
- the grader is root: bubblewrap builds the mounts as root, then `setpriv` drops to uid 61000 + slot
(one uid
  per concurrent sandbox, since RLIMIT_NPROC counts per uid, and root itself is exempt from it);
- the grader is not root: a new user namespace (`--unshare-user`, mapped to uid 1000 inside). Linux
counts
  RLIMIT_NPROC per user namespace (kernel >= 5.14), so a fork bomb in one sandbox stops at its own
  limit and neither the grader nor another sandbox of the same user loses processes
  (autograde/tests/test_sandbox.py). Nested user namespaces are refused inside (`--disable-userns`).

The whole memory budget is `Policy.memory_bytes`: the private /tmp, $HOME and /dev/shm (RAM-backed)
are carved out of it, and the rest is the address-space limit of each process. Where the grader may
make a memory cgroup (cgroup v1, as root), `MemoryGroup` also caps the sum over all of a sandbox's
processes and its tmpfs pages at the budget: RLIMIT_AS alone bounds each process, and a sandbox may
start up to `max_processes` of them. Elsewhere (not root, cgroup v2 only) `MemoryGroup` is a
watchdog over the summed resident memory of the sandbox's processes and what their open files can
hold in kernel buffers: it kills the tree within one poll of passing the budget (not a hard cap).
Kernel memory that no process shows is refused (memfd_create, SysV shmget, socket buffers past the
default) or bounded (open files: RLIMIT_NOFILE, soft and hard).

What it does not protect against: a kernel exploit, a side channel (timing, /proc/cpuinfo), and
resource use below the limits (a student can use its whole CPU and memory allowance).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/etc")
# root mode: sandbox uids FIRST_UID + slot; unused by Debian's system and login ranges
FIRST_UID = 61000
INSIDE_UID = 1000  # user-namespace mode: the uid the sandbox sees itself as
HOME = "/home/student"


@dataclass(frozen=True)
class Policy:
    """Limits of one sandboxed process tree."""

    # the whole budget: private /tmp and $HOME (RAM) plus each process's address space
    memory_bytes: int = 4 << 30
    max_processes: int = 64  # RLIMIT_NPROC of the sandbox's user: a fork bomb stops here
    file_bytes: int = 256 << 20  # largest file it may write (RLIMIT_FSIZE)
    # CPU time (RLIMIT_CPU), a backstop behind the grader's wall-clock deadlines
    cpu_seconds: int = 900
    tmp_bytes: int = 128 << 20  # private /tmp, a tmpfs in RAM, counted in memory_bytes
    home_bytes: int = 128 << 20  # private $HOME, likewise
    # private /dev/shm (POSIX shared memory: in no process's RSS until mapped), likewise
    shm_bytes: int = 16 << 20
    # RLIMIT_NOFILE, soft and hard: each open socket or pipe can hold kernel buffers that no RSS
    # shows (issue 37: with the soft limit raised to the hard one, Unix sockets queued 3 GB at 16 MB
    # RSS). An honest run needs far fewer (docs/sandbox.md: measured peak of any process of a graded
    # reference notebook).
    open_files: int = 256

    @property
    def address_space(self) -> int:
        """RLIMIT_AS of each process: what is left of the budget once the private folders are
        full."""
        return self.memory_bytes - self.tmp_bytes - self.home_bytes - self.shm_bytes


class MemoryGroup:
    """A memory cgroup (v1) holding one sandbox: its processes and tmpfs pages together stay under a
    limit.

    Made under the grader's own memory cgroup. Where that is impossible (not root, or no cgroup v1
    memory controller) it falls back to a watchdog (`started`): summed over the sandbox's process
    tree, polled every POLL_S, the resident memory (mapped shared memory included) plus what its
    open files could hold in kernel buffers (FD_BYTES per file-table slot, and the TCP bytes queued
    in its network namespace); the whole tree is killed once the sum passes the limit less the
    private folders (they are capped on their own). Memory no process shows otherwise is refused
    (memfd_create, shmget, larger socket buffers: the seccomp filter) or capped (open files:
    Policy.open_files). The watchdog is not a hard cap: between two polls a fill can pass the limit
    by what it writes in POLL_S, and each process stays under RLIMIT_AS whatever happens
    (docs/threat-model.md). ``enforced_by`` says which of the two held a sandbox.
    """

    POLL_S = 0.02

    def __init__(self, limit_bytes: int, name: str, watch_bytes: int | None = None):
        self.path: Path | None = None
        self._limit = watch_bytes if watch_bytes is not None else limit_bytes
        self._stop: Any = None  # a threading.Event while a thread watches the tree
        self.fired = False
        self.peak = 0  # the largest sum the watchdog saw (bytes)
        # which mechanism holds the limit, for the grade record's memory row: "cgroup v1" (a hard
        # cap over the processes and their tmpfs pages) or "watchdog" (a polled sum, see above: not
        # a hard cap)
        self.enforced_by = "watchdog"
        base = _memory_cgroup()
        if base is None:
            return
        import secrets

        path = base / f"autograde-{name}-{os.getpid()}-{secrets.token_hex(4)}"
        try:
            path.mkdir(exist_ok=True)
            (path / "memory.limit_in_bytes").write_text(str(limit_bytes))
            self.path = path
            self.enforced_by = "cgroup v1"
        except OSError:
            self.close()

    @property
    def available(self) -> bool:
        return self.path is not None

    def prefix(self) -> list[str]:
        """What to put before a command so that it (and all it starts) runs inside this group."""
        if self.path is None:
            return []
        return ["sh", "-c", f'echo $$ > {self.path / "cgroup.procs"} && exec "$@"', "sh"]

    def started(self, pid: int) -> None:
        """The sandbox's first process is `pid`: without a cgroup, watch its tree from now on."""
        if self.path is not None:
            return
        import threading

        self._stop = threading.Event()
        threading.Thread(target=self._watch, args=(pid, self._stop), daemon=True).start()

    def _watch(self, pid: int, stop) -> None:
        import signal

        import psutil

        try:
            root = psutil.Process(pid)
        except psutil.Error:
            return
        while not stop.wait(self.POLL_S):
            try:
                procs = [root, *root.children(recursive=True)]
            except psutil.Error:
                return  # the sandbox ended
            total = sum(_charged(proc.pid) for proc in procs)
            # bytes, twice for their overhead
            total += 2 * _tcp_queued(procs[-1].pid) if len(procs) > 1 else 0
            self.peak = max(self.peak, total)
            if total > self._limit:
                self.fired = True
                # the pid namespace's init last would do, but every pid is cheap to kill
                for proc in procs:
                    try:
                        proc.send_signal(signal.SIGKILL)
                    except psutil.Error:
                        pass
                return

    def hit(self) -> bool:
        """Whether the group reached its limit (an allocation failed or a process was killed for
        memory)."""
        if self.fired:
            return True
        if self.path is None:
            return False
        try:
            oom = dict(
                line.split() for line in (self.path / "memory.oom_control").read_text().splitlines()
            )
            return (
                int(oom.get("oom_kill", 0)) > 0
                or int((self.path / "memory.failcnt").read_text()) > 0
            )
        except (OSError, ValueError):
            return False

    def close(self) -> None:
        """Remove the group (its processes are gone: the sandbox ended with its pid namespace)."""
        import time

        if self._stop is not None:
            self._stop.set()
        if self.path is None:
            return
        for _ in range(50):
            try:
                self.path.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.1)
        self.path = None


# Kernel memory that one open file can hold beyond any RSS, at most: a Unix socket at the default
# buffer size (setsockopt cannot raise it, see _SETSOCKOPT; measured 222 kB a socket here), a pipe
# (64 kB; raised pipes are capped per user by fs.pipe-user-pages-soft). TCP sockets (loopback inside
# the sandbox) can queue more: their queued bytes are read from the sandbox's /proc/net/tcp instead.
FD_BYTES = 256 << 10


def _charged(pid: int) -> int:
    """What the watchdog counts for one process: its resident memory (mapped shared memory included)
    and FD_BYTES for each slot of its file table (FDSize: at least its open files, readable even for
    a process that made itself not dumpable, whose descriptors cannot be listed)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            fields = dict(line.split(b":", 1) for line in f.read().splitlines() if b":" in line)
        return int(fields[b"VmRSS"].split()[0]) * 1024 + int(fields[b"FDSize"]) * FD_BYTES
    except (OSError, KeyError, ValueError):
        return 0  # it ended (a kernel thread or zombie has no VmRSS)


def _tcp_queued(pid: int) -> int:
    """Bytes queued on the TCP sockets of pid's network namespace (the sandbox's own), sent or
    received."""
    total = 0
    for name in ("tcp", "tcp6"):
        try:
            with open(f"/proc/{pid}/net/{name}", "rb") as f:
                for line in f.read().splitlines()[1:]:
                    fields = line.split()
                    # a listening socket's columns are its backlog, not bytes
                    if fields[3] != b"0A":
                        tx, _, rx = fields[4].partition(b":")
                        total += int(tx, 16) + int(rx, 16)
        except (OSError, IndexError, ValueError):
            pass
    return total


def _memory_cgroup() -> Path | None:
    """The grader's own cgroup v1 memory folder, if this process may make groups in it."""
    if os.geteuid() != 0:
        return None
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, rel = line.split(":", 2)
            if "memory" in controllers.split(","):
                base = Path("/sys/fs/cgroup/memory") / rel.lstrip("/")
                return (
                    base
                    if (base / "memory.limit_in_bytes").exists() and os.access(base, os.W_OK)
                    else None
                )
    except (OSError, ValueError):
        return None
    return None


def mode() -> str:
    """'root' (a uid per sandbox via setpriv) or 'userns' (an unprivileged user namespace per
    sandbox)."""
    return "root" if os.geteuid() == 0 else "userns"


@functools.lru_cache(maxsize=None)
def _userns_works() -> str | None:
    """None if this user can make a sandbox in a user namespace, else what bubblewrap said."""
    try:
        r = subprocess.run(
            [
                "bwrap",
                "--unshare-user",
                "--unshare-pid",
                "--die-with-parent",
                "--ro-bind",
                "/",
                "/",
                "--proc",
                "/proc",
                "--dev",
                "/dev",
                "true",
            ],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return str(e)
    return (
        None
        if r.returncode == 0
        else (r.stderr.strip().splitlines() or ["exit " + str(r.returncode)])[-1]
    )


@functools.lru_cache(maxsize=None)
def _root_namespaces_work() -> str | None:
    """As root: None if bubblewrap can make its namespaces here, else what it said. A container
    without CAP_SYS_ADMIN, or whose seccomp profile refuses unshare (Docker's default,
    Gradescope's), cannot; without this probe every grading failed one by one instead of the run
    saying why once (issue 34)."""
    try:
        r = subprocess.run(
            [
                "bwrap",
                "--unshare-pid",
                "--unshare-ipc",
                "--unshare-uts",
                "--unshare-net",
                "--die-with-parent",
                "--ro-bind",
                "/",
                "/",
                "--proc",
                "/proc",
                "--dev",
                "/dev",
                "true",
            ],
            capture_output=True,
            text=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return str(e)
    return (
        None
        if r.returncode == 0
        else (r.stderr.strip().splitlines() or ["exit " + str(r.returncode)])[-1]
    )


def unavailable() -> str | None:
    """None if sandboxes can be made here, else one line saying what to install or enable."""
    for tool in ("bwrap", "setpriv", "prlimit"):
        if shutil.which(tool) is None:
            return (
                f"`{tool}` not found: install bubblewrap and util-linux "
                "(Debian/Ubuntu: apt-get install bubblewrap util-linux)"
            )
    if mode() == "root" and (why := _root_namespaces_work()) is not None:
        return (
            f"root cannot create namespaces here ({why}): a container must allow it "
            "(CAP_SYS_ADMIN, or a "
            "seccomp profile allowing clone/unshare of pid, mount, ipc, uts and net namespaces), "
            "or grade as a user allowed unprivileged user namespaces"
        )
    if mode() == "userns":
        why = _userns_works()
        if why is not None:
            return (
                f"this user cannot create user namespaces ({why}): enable unprivileged user "
                "namespaces "
                "(sysctl kernel.unprivileged_userns_clone=1 and user.max_user_namespaces > 0; on "
                "Ubuntu >= 23.10 also an AppArmor profile that allows bwrap, or "
                "kernel.apparmor_restrict_unprivileged_userns=0), or grade as root"
            )
    return None


def python_paths() -> list[Path]:
    """Folders this interpreter needs: its installation and its environment's packages (resolved
    links)."""
    paths = {
        Path(sys.base_prefix).resolve(),
        Path(sys.prefix).resolve(),
        Path(sys.executable).resolve().parent,
    }
    return sorted(paths)


def _parents(path: Path) -> list[Path]:
    return [p for p in reversed(path.parents) if p != Path("/")]


def _under_system(path: Path) -> bool:
    return any(str(path) == d or str(path).startswith(d + "/") for d in SYSTEM_DIRS)


# What a sandbox may not call: state the kernel shares across every namespace bubblewrap makes, that
# one sandbox could write and a later one read. The key store (add_key, request_key, keyctl): one
# student's answers reached another through it. The page cache of the read-only files every sandbox
# shares: evicting pages (fadvise DONTNEED) for the next student to time carried a softmax's hidden
# inputs into another student's feedback; fadvise, mincore (which reads residency directly),
# process_madvise and madvise's MADV_COLD / MADV_PAGEOUT go too (madvise itself stays: malloc uses
# it). No course code needs any of them. A seccomp filter (classic BPF, bwrap --seccomp) answers
# them, and any call made through another architecture's numbering (x32, i386), with EPERM. Timing
# alone, after warming a page by reading it, stays possible and noisy. Memory that no process's
# resident size shows (issue 37: as `nobody`, with no cgroup, memfd pages held 7.4 GB in a sandbox
# budgeted 4 GiB): memfd_create and memfd_secret, and SysV shmget (a segment detached after it is
# filled is in no process's RSS either) are refused too; POSIX shm_open lands in the 16 MB /dev/shm
# tmpfs.
_SECCOMP_ARCH = {  # audit arch; fully refused numbers; madvise's number
    "x86_64": (
        0xC000003E,
        {
            "add_key": 248,
            "request_key": 249,
            "keyctl": 250,
            "fadvise64": 221,
            "mincore": 27,
            "process_madvise": 440,
            "memfd_create": 319,
            "memfd_secret": 447,
            "shmget": 29,
        },
        28,
    ),
    "aarch64": (
        0xC00000B7,
        {
            "add_key": 217,
            "request_key": 218,
            "keyctl": 219,
            "fadvise64": 223,
            "mincore": 232,
            "process_madvise": 440,
            "memfd_create": 279,
            "memfd_secret": 447,
            "shmget": 194,
        },
        233,
    ),
}
BLOCKED_SYSCALLS = tuple(_SECCOMP_ARCH["x86_64"][1])  # the same names on every architecture
MADV_REFUSED = (20, 21)  # MADV_COLD, MADV_PAGEOUT
# A process in the sandbox could stop the runner with SIGSTOP (same uid), which turned off the
# per-cell limits until the notebook's wall limit. Signals whose default action stops a process
# (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU: 19-22 on both architectures) are refused with EPERM on every
# call that sends one; no course code sends them. {name: (x86_64 number, aarch64 number, index of
# the signal argument)}
_SIGNAL_CALLS = {
    "kill": (62, 129, 1),
    "tkill": (200, 130, 1),
    "tgkill": (234, 131, 2),
    "rt_sigqueueinfo": (129, 138, 1),
    "rt_tgsigqueueinfo": (297, 240, 2),
    "pidfd_send_signal": (424, 424, 1),
}
STOP_SIGNALS = (19, 20, 21, 22)
# Socket buffers are kernel memory that no RSS shows either. Open files are capped
# (Policy.open_files), and each socket's buffer stays at the system default: setsockopt(SOL_SOCKET,
# SO_SNDBUF / SO_RCVBUF and their FORCE forms) is refused (with the default raised to this machine's
# wmem_max of 4 MB, one process queued 1977 MB on 256 files at 11 MB RSS). No course code sets them
# (ZeroMQ only when asked to).
_SETSOCKOPT = {"x86_64": 54, "aarch64": 208}
SOL_SOCKET = 1
BUFFER_OPTIONS = (7, 8, 32, 33)  # SO_SNDBUF, SO_RCVBUF, SO_SNDBUFFORCE, SO_RCVBUFFORCE


def seccomp_program(machine: str | None = None) -> bytes | None:
    """The filter for this machine's architecture (struct sock_filter, little-endian), None where
    unknown."""
    import platform

    machine = machine or platform.machine()
    if machine not in _SECCOMP_ARCH:
        return None
    arch, numbers, madvise = _SECCOMP_ARCH[machine]
    LD_ABS, JEQ, JGE, RET = 0x20, 0x15, 0x35, 0x06
    ALLOW, DENY = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW; SECCOMP_RET_ERRNO | EPERM

    def arg(i: int) -> int:
        return 16 + i * 8  # seccomp_data.args[i], its low 32 bits (little-endian)

    column = 0 if machine == "x86_64" else 1
    # (code, k, where a true test jumps, where a false one jumps): a label or None (the next
    # instruction); ("label", name) entries mark where a label points
    body: list[tuple] = [
        (LD_ABS, 4, None, None),
        (JEQ, arch, None, "deny"),
        (LD_ABS, 0, None, None),
    ]
    if machine == "x86_64":
        body.append((JGE, 0x40000000, "deny", None))  # the x32 numbering
    body += [(JEQ, n, "deny", None) for n in numbers.values()]
    body += [(JEQ, nrs[column], f"signal{nrs[2]}", None) for nrs in _SIGNAL_CALLS.values()]
    body.append((JEQ, _SETSOCKOPT[machine], "sockopt", None))
    body += [(JEQ, madvise, None, "allow"), (LD_ABS, arg(2), None, None)]
    body += [(JEQ, advice, "deny", None) for advice in MADV_REFUSED]
    body.append((JGE, 0, "allow", "allow"))
    for i in sorted({nrs[2] for nrs in _SIGNAL_CALLS.values()}):
        body += [
            ("label", f"signal{i}"),
            (LD_ABS, arg(i), None, None),
            (JGE, min(STOP_SIGNALS), None, "allow"),
            (JGE, max(STOP_SIGNALS) + 1, "allow", "deny"),
        ]
    body += [
        ("label", "sockopt"),
        (LD_ABS, arg(1), None, None),
        (JEQ, SOL_SOCKET, None, "allow"),
        (LD_ABS, arg(2), None, None),
    ]
    body += [(JEQ, option, "deny", None) for option in BUFFER_OPTIONS]
    body += [
        ("label", "allow"),
        (RET, ALLOW, None, None),
        ("label", "deny"),
        (RET, DENY, None, None),
    ]
    from autograde.inside.nospawn import assemble

    return assemble(body)


# + the grader's pid + "-": the temporary folder holding its filter file
SECCOMP_PREFIX = "autograde-seccomp-"


@functools.lru_cache(maxsize=None)
def _seccomp_file() -> str | None:
    """The filter, written once per grader process to a file of its own (bwrap reads it from a
    descriptor).

    Removed when the grader exits (issue 37: one file per grader process was left behind); a folder
    left by a grader that could not clean up (killed) is removed by the next grader of the same user
    that starts (test_sandbox.py::test_the_grader_leaves_no_filter_file_behind)."""
    import atexit
    import tempfile

    program = seccomp_program()
    if program is None:
        return None
    _remove_stale_filters()
    folder = tempfile.mkdtemp(prefix=f"{SECCOMP_PREFIX}{os.getpid()}-")
    atexit.register(_remove_filter, folder, os.getpid())
    # a non-root grader's test launches sandboxes as another user: it must open the file
    os.chmod(folder, 0o711)
    path = os.path.join(folder, "filter.bpf")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o444)
    with os.fdopen(fd, "wb") as f:
        f.write(program)
    return path


def _remove_filter(folder: str, owner: int) -> None:
    if os.getpid() == owner:  # a forked child shares its parent's file: the parent removes it
        shutil.rmtree(folder, ignore_errors=True)


def _remove_stale_filters() -> None:
    """Remove filter folders of this user whose grader process is gone (killed before its exit
    handlers ran)."""
    import stat
    import tempfile

    try:
        entries = list(os.scandir(tempfile.gettempdir()))
    except OSError:
        return
    for entry in entries:
        pid = (
            entry.name[len(SECCOMP_PREFIX) :].partition("-")[0]
            if entry.name.startswith(SECCOMP_PREFIX)
            else ""
        )
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if (
            not pid.isdigit()
            or st.st_uid != os.geteuid()
            or not stat.S_ISDIR(st.st_mode)
            or _alive(int(pid))
        ):
            continue
        shutil.rmtree(entry.path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _open_files(policy: Policy) -> int:
    """Policy.open_files, or the grader's own hard limit if lower (an unprivileged prlimit cannot
    raise it)."""
    import resource

    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    return policy.open_files if hard == resource.RLIM_INFINITY else min(policy.open_files, hard)


def wrap(
    argv: list[str],
    *,
    readonly: list[Path],
    policy: Policy = Policy(),
    slot: int = 0,
    env: dict[str, str] | None = None,
    userns: bool | None = None,
) -> list[str]:
    """The command that runs argv in a sandbox (see the module docstring).

    readonly: files and folders bound read-only at the same path (the Python installation is always
    there). Its working folder is its private $HOME. Nothing it writes reaches the host: read what
    it prints instead. userns: force the user-namespace way (for a command that a non-root user will
    run); default: by mode().
    """
    reason = unavailable()
    if reason:
        raise RuntimeError(f"cannot sandbox student code: {reason}")
    root = mode() == "root" if userns is None else not userns
    return [
        *_namespaces(root),
        *_mounts(policy, readonly),
        *_environment(env),
        *_privileges_dropped(root, slot),
        *_limits(policy),
        *argv,
    ]


def _namespaces(root: bool) -> list[str]:
    """bwrap with its own pid, ipc, uts, network and cgroup namespaces (and the seccomp filter)."""
    # --as-pid-1: the command itself is pid 1, with no bubblewrap reaper beside it holding the
    # grader's pipes (in a user namespace that reaper runs as the sandbox's uid, dumpable: a
    # white-box red team opened /proc/1/fd/1 from the answers' process and could write the grader's
    # frames); pid 1 also ignores signals it has no handler for, from inside its namespace
    cmd = [
        "bwrap",
        "--die-with-parent",
        "--new-session",
        "--unshare-pid",
        "--as-pid-1",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-net",
        "--unshare-cgroup-try",
    ]
    seccomp = _seccomp_file()
    if seccomp is not None:
        # bwrap loads the filter from descriptor 9 and closes it before it starts argv
        cmd = ["sh", "-c", 'exec 9<"$0" && exec "$@"', seccomp, *cmd, "--seccomp", "9"]
    if root:
        cmd += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--cap-add", "CAP_SETPCAP"]
    else:
        uid = str(INSIDE_UID)
        cmd += ["--unshare-user", "--disable-userns", "--uid", uid, "--gid", uid]
    return cmd


def _mounts(policy: Policy, readonly: list[Path]) -> list[str]:
    """The system folders and ``readonly`` read-only, private tmpfs /tmp, /dev/shm and $HOME."""
    cmd: list[str] = []
    for d in SYSTEM_DIRS:
        if os.path.exists(d):
            cmd += ["--ro-bind", d, d]
    cmd += ["--proc", "/proc", "--dev", "/dev"]
    for size, folder in (
        (policy.tmp_bytes, "/tmp"),
        (policy.shm_bytes, "/dev/shm"),
        (policy.home_bytes, HOME),
    ):
        cmd += ["--size", str(size), "--perms", "1777", "--tmpfs", folder]
    made: set[Path] = {Path(HOME), Path(HOME).parent}
    for path in [*python_paths(), *readonly]:
        path = Path(path)
        # bwrap makes missing parent folders 0700 (unreadable to the sandbox user): make them 0755
        # ourselves.
        for parent in _parents(path):
            if parent not in made and not _under_system(parent):
                cmd += ["--perms", "0755", "--dir", str(parent)]
                made.add(parent)
        cmd += ["--ro-bind", str(path), str(path)]
    return cmd


def _environment(env: dict[str, str] | None) -> list[str]:
    """Its private $HOME as the working folder, and only ``env`` plus HOME, TMPDIR and PATH."""
    cmd = ["--chdir", HOME, "--clearenv"]
    for key, value in (env or {}).items():
        cmd += ["--setenv", key, value]
    path = f"{Path(sys.executable).parent}:/usr/bin:/bin"
    return cmd + ["--setenv", "HOME", HOME, "--setenv", "TMPDIR", "/tmp", "--setenv", "PATH", path]


def _privileges_dropped(root: bool, slot: int) -> list[str]:
    """As root: setpriv to the slot's own uid, no groups, no new privileges, no capabilities."""
    if not root:
        return []
    uid = FIRST_UID + slot
    return [
        "setpriv",
        f"--reuid={uid}",
        f"--regid={uid}",
        "--clear-groups",
        "--no-new-privs",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--",
    ]


def _limits(policy: Policy) -> list[str]:
    """prlimit: address space, processes, file size, CPU time, open files, no core files."""
    return [
        "prlimit",
        f"--as={policy.address_space}",
        f"--nproc={policy.max_processes}",
        f"--fsize={policy.file_bytes}",
        f"--cpu={policy.cpu_seconds}",
        f"--nofile={_open_files(policy)}",
        "--core=0",
        "--",
    ]


def command(
    argv: list[str],
    *,
    readonly: list[Path],
    env: dict[str, str],
    policy: Policy,
    slot: int,
    name: str,
) -> tuple[list[str], MemoryGroup]:
    """The grader's one way to run student code: argv in a sandbox (``wrap``) inside a memory group
    of its own.

    Returns (the command, its group): pass ``group.started`` to ``boundary.run`` (the watchdog,
    where no cgroup can be made), then ``group.hit()`` says whether the processes together reached
    the budget; close the group after. Used by the run (autograde.grade) and the verification
    (autograde.verify); ``name`` names the cgroup."""
    group = MemoryGroup(policy.memory_bytes, name, watch_bytes=policy.address_space)
    try:
        return group.prefix() + wrap(
            argv, readonly=readonly, policy=policy, slot=slot, env=env
        ), group
    except BaseException:
        group.close()
        raise
