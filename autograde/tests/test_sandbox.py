"""The sandbox: what student code can see and do when the grader runs it (Linux namespaces +
rlimits).

Each test runs a small Python program in a sandbox and checks the effect from outside, twice: as a
root grader (a uid per sandbox) and as a grader that is not root (a user namespace per sandbox,
launched by the unprivileged user `nobody`). They need root (to become `nobody`, or to be root) and
bubblewrap, as on the course's grading machines and in CI.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from autograde import sandbox
from autograde.course import REPO
from autograde.tests import unprivileged

pytestmark = pytest.mark.skipif(
    sandbox.unavailable() is not None or os.geteuid() != 0,
    reason=f"sandbox tests need root and bubblewrap: {sandbox.unavailable()}",
)

MODES = ["root", "userns"]


def run(
    mode: str,
    code: str,
    policy: sandbox.Policy = sandbox.Policy(),
    slot: int = 7,
    timeout: float = 60,
    readonly=(REPO / "course_lib",),
    grader_env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    """Run code in a sandbox made the way a root (or a non-root) grader makes it; return what it
    printed. ``grader_env``: more variables in the grader's own environment (the sandbox's is
    cleared)."""
    cmd = sandbox.wrap(
        [sys.executable, "-c", textwrap.dedent(code)],
        policy=policy,
        slot=slot,
        readonly=list(readonly),
        env={"PYTHONPATH": str(REPO)},
        userns=mode == "userns",
    )
    if mode == "userns":
        cmd = unprivileged.command(cmd, {"PATH": "/usr/bin:/bin", **(grader_env or {})})
    return subprocess.run(
        cmd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(grader_env or {})},
    )


@pytest.mark.parametrize("mode", MODES)
def test_runs_as_an_unprivileged_user_that_sees_only_what_it_needs(tmp_path, mode):
    secret = tmp_path / "gradebook.db"
    secret.write_text("scores")
    r = run(
        mode,
        f"""
        import os
        print(os.getuid(), os.getgid(), os.getpid())
        print(open('/proc/self/status').read().split('CapEff:')[1].split()[0])
        for p in ['{secret}', '{REPO / "solutions"}', '/root/.ssh', '{REPO / "autograde" / "hidden"}',
                  '{REPO / "autograde" / "references"}', '{REPO / "notebooks"}']:
            print(p, os.path.exists(p))
        import course_lib.model  # what a notebook legitimately needs is there
        print('ok')
    """,  # noqa: E501
    )
    lines = r.stdout.split("\n")
    assert r.returncode == 0, r.stderr
    uid, gid, pid = lines[0].split()
    inside = sandbox.FIRST_UID + 7 if mode == "root" else sandbox.INSIDE_UID
    assert uid == gid == str(inside) and int(pid) < 10  # own pid namespace
    assert int(lines[1], 16) == 0  # no capabilities
    assert all(line.endswith("False") for line in lines[2:8]), lines
    assert lines[8] == "ok"


@pytest.mark.parametrize("mode", MODES)
def test_fork_bomb_stops_at_the_process_limit_and_only_there(tmp_path, mode):
    """The limit holds inside; outside, the same user (the grader, in userns mode) can still start
    processes."""
    cmd = sandbox.wrap(
        [
            sys.executable,
            "-c",
            textwrap.dedent("""
        import os, time
        n = 0
        try:
            while True:
                if os.fork() == 0:
                    time.sleep(30)
                    os._exit(0)
                n += 1
        except OSError as e:
            print(n, type(e).__name__, flush=True)
        time.sleep(6)
    """),
        ],
        policy=sandbox.Policy(max_processes=32),
        readonly=[],
        userns=mode == "userns",
    )
    outside = [
        sys.executable,
        "-c",
        "import subprocess; ps = [subprocess.Popen(['sleep', '2']) for _ in range(40)];"
        "[p.wait() for p in ps]; print('outside', len(ps))",
    ]
    if mode == "userns":
        cmd = unprivileged.command(cmd, {"PATH": "/usr/bin:/bin"})
        outside = unprivileged.command(outside, {"PATH": "/usr/bin:/bin"})
    bomb = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    time.sleep(3)  # the bomb has hit its limit (it stops within a second)
    other = subprocess.run(outside, capture_output=True, text=True, timeout=60)
    out, _ = bomb.communicate(timeout=60)
    n, err = out.split()
    assert int(n) < 32 and err == "BlockingIOError"
    assert other.stdout.strip() == "outside 40", other.stderr


@pytest.mark.parametrize("mode", MODES)
def test_no_process_outlives_the_sandbox(mode):
    marker = f"sandbox-leftover-{mode}-{os.getpid()}"
    r = run(
        mode,
        f"""
        import os, subprocess
        subprocess.Popen(['/bin/sh', '-c', 'exec -a {marker} sleep 120'], start_new_session=True)
        print('started')
    """,
    )
    assert r.stdout.strip() == "started", r.stderr
    time.sleep(0.5)
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert marker not in ps


@pytest.mark.parametrize("mode", MODES)
def test_memory_fill_becomes_a_memory_error(mode):
    r = run(
        mode,
        """
        try:
            x = bytearray(6 << 30)
            print('allocated')
        except MemoryError:
            print('MemoryError')
    """,
        policy=sandbox.Policy(memory_bytes=2 << 30),
    )
    assert r.stdout.strip() == "MemoryError", r.stderr


@pytest.mark.parametrize("mode", MODES)
def test_private_tmp_home_and_shm_are_capped_and_stay_inside(mode):
    """Each private folder fills up at its cap (RAM counted in the budget), and nothing reaches the
    host."""
    marker = f"sandbox-wrote-{os.getpid()}"
    r = run(
        mode,
        f"""
        import os
        for folder in ['/tmp', os.environ['HOME'], '/dev/shm']:
            written = 0
            try:
                with open(os.path.join(folder, '{marker}'), 'wb') as f:
                    while written < (200 << 20):
                        f.write(b'x' * (1 << 20))
                        written += 1 << 20
                    f.flush()
            except OSError as e:
                print(folder == os.environ['HOME'], written >> 20, e.errno)
    """,
        policy=sandbox.Policy(tmp_bytes=32 << 20, home_bytes=48 << 20, file_bytes=1 << 30),
    )
    lines = r.stdout.split("\n")
    assert len(lines) >= 3, (r.stdout, r.stderr)
    assert lines[0].split() == ["False", "32", "28"], lines  # ENOSPC at the /tmp cap
    assert lines[1].split() == ["True", "48", "28"], lines
    assert int(lines[2].split()[1]) <= 16 and lines[2].split()[2] == "28", lines
    assert not os.path.exists(f"/tmp/{marker}") and not os.path.exists(f"/dev/shm/{marker}")
    assert sandbox.Policy().address_space == sandbox.Policy().memory_bytes - (272 << 20)


@pytest.mark.parametrize("mode", MODES)
def test_huge_file_is_cut_at_the_file_size_limit(mode):
    r = run(
        mode,
        """
        import signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        try:
            with open('big', 'wb') as f:
                f.write(b'x' * (8 << 20))
        except OSError as e:
            print('refused', e.errno)
    """,
        policy=sandbox.Policy(file_bytes=1 << 20),
    )
    assert r.stdout.startswith("refused"), r.stderr


@pytest.mark.parametrize("mode", MODES)
def test_cannot_signal_the_grader(mode):
    r = run(
        mode,
        f"""
        import os, signal
        try:
            os.kill({os.getpid()}, signal.SIGKILL)
            print('sent')
        except ProcessLookupError:
            print('no such process')
    """,
    )
    assert r.stdout.split("\n")[0] == "no such process"  # the grader's pid does not exist in there


@pytest.mark.parametrize("mode", MODES)
def test_no_network_not_even_the_graders_loopback(mode):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    try:
        r = run(
            mode,
            f"""
            import socket
            try:
                socket.create_connection(('127.0.0.1', {port}), timeout=2)
                print('connected')
            except OSError as e:
                print('refused')
        """,
        )
    finally:
        server.close()
    assert r.stdout.strip() == "refused"


@pytest.mark.parametrize("mode", MODES)
def test_readonly_mounts_cannot_be_written(mode):
    r = run(
        mode,
        f"""
        try:
            open('{REPO / "course_lib" / "x.py"}', 'w')
            print('wrote')
        except OSError:
            print('refused')
    """,
    )
    assert r.stdout.strip() == "refused"
    assert not (REPO / "course_lib" / "x.py").exists()


@pytest.mark.skipif(
    sandbox._memory_cgroup() is None, reason="no cgroup v1 memory controller (or not root)"
)
def test_memory_summed_over_processes_stays_under_the_budget():
    """RLIMIT_AS bounds each process; a memory cgroup bounds their sum (a red team held 5.2 GB under
    2 GB with three children). Three children each fill 700 MB, allowed one by one, under a 1.5 GB
    budget."""
    policy = sandbox.Policy(memory_bytes=1536 << 20)
    group = sandbox.MemoryGroup(policy.memory_bytes, "test")
    code = textwrap.dedent("""
        import os, time
        kids = []
        for _ in range(3):
            pid = os.fork()
            if pid == 0:
                x = bytearray(700 << 20)  # zero-filled: every page touched
                time.sleep(3)
                os._exit(0)
            kids.append(pid)
        print(sum(os.waitpid(k, 0)[1] == 0 for k in kids))
    """)
    try:
        cmd = group.prefix() + sandbox.wrap(
            [sys.executable, "-c", code], readonly=[], policy=policy
        )
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        peak = int((group.path / "memory.max_usage_in_bytes").read_text())
        assert int(r.stdout.strip()) < 3, (r.stdout, r.stderr)  # not all three fit
        assert group.hit() and peak <= policy.memory_bytes
    finally:
        group.close()


@pytest.mark.parametrize("mode", MODES)
def test_without_a_cgroup_a_watchdog_stops_the_summed_memory(mode, monkeypatch):
    """No memory cgroup (a grader that is not root, or cgroup v2 only): the watchdog sums the
    resident memory of the sandbox's whole tree and kills it. Three children each fill 700 MB (each
    allowed by RLIMIT_AS) and then wait 3 s, so the sum (2.1 GB) stands well past the 1.25 GB limit
    for longer than any poll delay."""
    monkeypatch.setattr(sandbox, "_memory_cgroup", lambda: None)
    policy = sandbox.Policy(memory_bytes=1536 << 20)
    group = sandbox.MemoryGroup(policy.memory_bytes, "test", watch_bytes=policy.address_space)
    assert not group.available
    code = textwrap.dedent("""
        import os, time
        kids = []
        for _ in range(3):
            pid = os.fork()
            if pid == 0:
                x = bytearray(700 << 20)  # zero-filled: every page touched
                time.sleep(3)
                os._exit(0)
            kids.append(pid)
        print(sum(os.waitpid(k, 0)[1] == 0 for k in kids))
    """)
    cmd = sandbox.wrap(
        [sys.executable, "-c", code], readonly=[], policy=policy, userns=mode == "userns"
    )
    if mode == "userns":
        cmd = unprivileged.command(cmd, {"PATH": "/usr/bin:/bin"})
    p = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:
        group.started(p.pid)
        out, err = p.communicate(timeout=120)
    finally:
        group.close()
    assert group.hit() and out.strip() != "3", (out, err, group.peak)
    assert group.peak > policy.address_space  # it fired on what it measured, not on an error


def test_userns_refusal_names_what_to_enable(monkeypatch):
    """A grader that cannot make user namespaces gets one line saying what to enable, not a
    traceback."""
    monkeypatch.setattr(sandbox, "mode", lambda: "userns")
    monkeypatch.setattr(sandbox, "_userns_works", lambda: "setting up uid map: Permission denied")
    why = sandbox.unavailable()
    assert "\n" not in why and "unprivileged_userns_clone" in why and "Permission denied" in why


@pytest.mark.parametrize("mode", MODES)
def test_no_process_in_a_sandbox_holds_the_graders_pipes_but_the_first(mode):
    """The sandbox's first process (the verification relay, the runner) is not dumpable and holds
    the grader's pipes; a process it forks (the answers' process) must not reach them through any
    other process. A white-box red team, as `nobody`, opened /proc/1/fd/1: bubblewrap's own pid 1,
    which ran as the sandbox's uid in a user namespace and kept the pipes, and whose environment was
    the grader's (a hub's API token in it). Now the command is pid 1 itself (`--as-pid-1`). The
    child counts the descriptors 0-2 of other processes it could open, and the environments it could
    read that hold the grader's own variables (control by mutation: without `--as-pid-1` the command
    is pid 2 and, in a user namespace, the child opens pid 1's pipes and reads the mark)."""
    got = run(
        mode,
        """
        import ctypes, os
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # as autograde.inside.runner.not_dumpable
        pid = os.fork()
        if pid == 0:
            me, opened = os.getpid(), []
            for p in [p for p in os.listdir('/proc') if p.isdigit() and int(p) != os.getpid()]:
                for fd in ('0', '1', '2'):
                    try:
                        os.close(os.open(f'/proc/{p}/fd/{fd}', os.O_RDONLY | os.O_NONBLOCK))
                        opened.append(p + '/' + fd)
                    except OSError:
                        pass
                try:
                    opened += ['environ'] if b'GRADER_MARK_71' in open(f'/proc/{p}/environ', 'rb').read() else []
                except OSError:
                    pass
            os._exit(len(opened))
        print('pid', os.getpid(), 'child', os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
    """,  # noqa: E501
        grader_env={"GRADER_MARK_71": "hub-token"},
    )
    assert got.stdout.split() == ["pid", "1", "child", "0"], (got.stdout, got.stderr[-800:])


def test_a_root_grader_without_namespaces_says_why_once_and_grades_nobody(tmp_path):
    """A container that refuses namespaces to root (no CAP_SYS_ADMIN; Docker's default seccomp
    profile) was simulated by dropping CAP_SYS_ADMIN from root's bounding set: `grade` used to
    start, and every student's sandbox then failed on its own. Now it refuses in one line and writes
    nothing. Control: the same command with the capability kept gets past the check (it fails only
    on the empty submissions folder, later)."""
    subs, out = tmp_path / "subs", tmp_path / "out"
    subs.mkdir()
    drop = ["setpriv", "--bounding-set=-sys_admin", "--inh-caps=-sys_admin", "--"]
    cmd = [sys.executable, "-m", "autograde", "grade", str(subs), "--out", str(out)]
    env = {**os.environ, "PATH": f"{os.path.dirname(sys.executable)}:/usr/bin:/bin"}
    refused = subprocess.run(
        drop + cmd, capture_output=True, text=True, timeout=300, cwd=REPO, env=env
    )
    assert refused.returncode == 2 and not out.exists(), (refused.returncode, refused.stderr[-500:])
    line = refused.stderr.strip().splitlines()[-1]
    assert (
        line.startswith("autograde: cannot grade safely: root cannot create namespaces here")
        and "CAP_SYS_ADMIN" in line
    )
    kept = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=REPO, env=env)
    assert "cannot create namespaces" not in kept.stderr, kept.stderr[-500:]


@pytest.mark.parametrize("mode", MODES)
def test_the_kernel_key_store_is_closed_to_the_sandbox(mode, monkeypatch):
    """Keys live outside every namespace bwrap makes: a key one sandbox's uid stored outlived it and
    a later sandbox read it (a red team passed answers from one student to another). The filter
    answers add_key, request_key and keyctl with EPERM. Control: the same calls work outside the
    sandbox (nothing else stops them), and an ordinary call works inside."""
    probe = """
        import ctypes, os, platform
        nr = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        k = libc.syscall(nr[0], b"user", b"rt6-probe", b"secret", 6, ctypes.c_long(-2))  # add_key to the user keyring
        e1 = ctypes.get_errno()
        if k > 0:
            libc.syscall(nr[1], 21, ctypes.c_long(k))  # KEYCTL_INVALIDATE: leave nothing behind
        r = libc.syscall(nr[1], 0, ctypes.c_long(-3), 0)  # KEYCTL_GET_KEYRING_ID of the session keyring
        print(k > 0, os.strerror(e1) if k <= 0 else "", r >= 0, os.getpid() > 0)
    """  # noqa: E501
    r = run(mode, probe)
    assert r.stdout.split() == ["False", "Operation", "not", "permitted", "False", "True"], r.stderr
    control = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(probe)], capture_output=True, text=True, timeout=60
    )
    assert control.stdout.split() == ["True", "True", "True"], control.stderr
    # the namespaces alone do not close it
    monkeypatch.setattr(sandbox, "_seccomp_file", lambda: None)
    assert run(mode, probe).stdout.split() == ["True", "True", "True"]


def _run_filter(prog: bytes, arch: int, nr: int, arg2: int = 0, arg1: int = 0) -> int:
    """Classic BPF, the few instructions the filter uses, run on one seccomp_data."""
    import struct

    insns = [struct.unpack("<HBBI", prog[i : i + 8]) for i in range(0, len(prog), 8)]
    data = struct.pack("<iIQ6Q", nr, arch, 0, 0, arg1, arg2, 0, 0, 0)
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        if code == 0x20:
            acc = struct.unpack_from("<I", data, k)[0]
        elif code in (0x15, 0x35):
            taken = acc == k if code == 0x15 else acc >= k
            pc += jt if taken else jf
        elif code == 0x06:
            return k
        pc += 1


def test_the_filter_refuses_exactly_its_calls_and_other_architectures_numbering():
    """Run as BPF on sample calls: the refused calls get EPERM, madvise only for MADV_COLD /
    MADV_PAGEOUT, x32 numbers and another architecture's calls are refused, ordinary calls pass."""
    allow, eperm = 0x7FFF0000, 0x00050001
    for machine, (arch, numbers, madvise) in sandbox._SECCOMP_ARCH.items():
        prog = sandbox.seccomp_program(machine)
        assert set(numbers) == set(sandbox.BLOCKED_SYSCALLS)
        for n in numbers.values():
            assert _run_filter(prog, arch, n) == eperm
        assert (
            _run_filter(prog, arch, madvise, 21) == eperm
            and _run_filter(prog, arch, madvise, 20) == eperm
        )
        assert _run_filter(prog, arch, madvise, 4) == allow  # MADV_DONTNEED: malloc's
        for ordinary in (0, 1, 3, 39, 57, 59, 60, 231):
            assert _run_filter(prog, arch, ordinary) == allow
        assert _run_filter(prog, 0x40000003, 1) == eperm  # i386's numbering
        # signals that stop a process are refused on every call that sends one; every other signal
        # passes
        column = 0 if machine == "x86_64" else 1
        for name, nrs in sandbox._SIGNAL_CALLS.items():
            for sig in range(0, 65):
                got = _run_filter(
                    prog, arch, nrs[column], **({"arg1": sig} if nrs[2] == 1 else {"arg2": sig})
                )
                assert got == (eperm if sig in (19, 20, 21, 22) else allow), (machine, name, sig)
        # socket buffers stay at the default: only SOL_SOCKET's buffer-size options are refused
        setsockopt = sandbox._SETSOCKOPT[machine]
        for level, option in [(1, o) for o in range(0, 70)] + [(6, 7), (6, 8), (0, 7), (41, 32)]:
            refused = level == 1 and option in (7, 8, 32, 33)
            assert _run_filter(prog, arch, setsockopt, arg1=level, arg2=option) == (
                eperm if refused else allow
            )
    prog = sandbox.seccomp_program("x86_64")
    assert _run_filter(prog, 0xC000003E, 0x40000000 | 250) == eperm  # x32 keyctl
    assert sandbox.seccomp_program("s390x") is None


@pytest.mark.parametrize("mode", MODES)
def test_no_process_in_the_sandbox_can_be_stopped_by_a_signal(mode, monkeypatch):
    """An answer (a blind red team's) stopped the in-sandbox runner with SIGSTOP, which switched off
    the per-cell limits. SIGTSTP (which stops by default) is refused; with a handler installed, the
    control shows it would have been delivered, and SIGUSR1 still is."""
    probe = """
        import os, signal
        got = []
        signal.signal(signal.SIGTSTP, lambda *a: got.append("tstp"))
        signal.signal(signal.SIGUSR1, lambda *a: got.append("usr1"))
        try:
            os.kill(os.getpid(), signal.SIGTSTP)
        except PermissionError:
            got.append("refused")
        os.kill(os.getpid(), signal.SIGUSR1)
        print(" ".join(got))
    """
    assert run(mode, probe).stdout.split() == ["refused", "usr1"]
    monkeypatch.setattr(sandbox, "_seccomp_file", lambda: None)
    assert run(mode, probe).stdout.split() == ["tstp", "usr1"]


@pytest.mark.parametrize("mode", MODES)
def test_the_page_cache_cannot_be_evicted_or_read_from_the_sandbox(mode, monkeypatch):
    """An answer (a red team's) evicted pages of a shared read-only file (posix_fadvise DONTNEED)
    for the next student to time, carrying hidden inputs across; mincore reads residency without
    timing. Both refused, and madvise's MADV_PAGEOUT; madvise itself works. Control: without the
    filter they work in the sandbox."""
    probe = f"""
        import ctypes, mmap, os
        fd = os.open({str(REPO / "course_lib" / "__init__.py")!r}, os.O_RDONLY)
        out = []
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); out.append("fadvise:ok")
        except OSError as e:
            out.append("fadvise:" + str(e.errno))
        m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
        libc = ctypes.CDLL(None, use_errno=True)
        buf = (ctypes.c_ubyte * 64)()
        import numpy as np
        p = np.frombuffer(m, dtype=np.uint8).ctypes.data  # the mapping's address
        r = libc.mincore(ctypes.c_void_p(p - p % 4096), ctypes.c_size_t(4096), buf)
        out.append("mincore:" + ("ok" if r == 0 else str(ctypes.get_errno())))
        r = libc.madvise(ctypes.c_void_p(p - p % 4096), ctypes.c_size_t(4096), 21)
        out.append("pageout:" + ("ok" if r == 0 else str(ctypes.get_errno())))
        r = libc.madvise(ctypes.c_void_p(p - p % 4096), ctypes.c_size_t(4096), 4)
        out.append("dontneed:" + ("ok" if r == 0 else str(ctypes.get_errno())))
        print(" ".join(out))
    """
    assert run(mode, probe).stdout.split() == ["fadvise:1", "mincore:1", "pageout:1", "dontneed:ok"]
    monkeypatch.setattr(sandbox, "_seccomp_file", lambda: None)
    assert run(mode, probe).stdout.split() == [
        "fadvise:ok",
        "mincore:ok",
        "pageout:ok",
        "dontneed:ok",
    ]


def test_the_grader_leaves_no_filter_file_behind(tmp_path):
    """Issue 37: every grader process left its seccomp filter in the temporary folder. A grader that
    exits removes its own; one killed before its exit handlers ran (SIGKILL) leaves it (the control:
    the file is there while a grader runs, and after a kill), and the next grader of the same user
    removes it. Only the folders these runs made are judged (others may use the machine); the
    temporary folder is this test's own."""
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHONPATH": str(REPO)}
    make = (
        "import os, sys; from autograde import sandbox; p = sandbox._seccomp_file(); print(p, "
        "flush=True); "
    )
    ended = subprocess.run(
        [sys.executable, "-c", make + "print(os.path.exists(p))"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    path, existed = ended.stdout.split()
    assert existed == "True" and not os.path.exists(os.path.dirname(path)), ended.stderr
    killed = subprocess.Popen(
        [sys.executable, "-c", make + "os.kill(os.getpid(), 9)"],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    left = killed.communicate(timeout=60)[0].split()[0]
    # the control: a killed grader's file stays until another grader starts
    assert os.path.exists(left)
    running = subprocess.Popen(
        [sys.executable, "-c", make + "sys.stdin.read()"],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    mine = running.stdout.readline().split()[0]
    # the next grader removed it, and holds its own
    assert not os.path.exists(left) and os.path.exists(mine)
    running.communicate("", timeout=60)
    assert not os.path.exists(os.path.dirname(mine))
    assert [p.name for p in tmp_path.iterdir()] == []


@pytest.mark.parametrize("mode", MODES)
def test_memory_no_process_shows_cannot_be_made(mode, monkeypatch):
    """Issue 37: as `nobody` (no cgroup, the watchdog sums resident memory), pages of a memfd held
    7.4 GB in a sandbox budgeted 4 GiB: a memfd's pages, like a SysV segment filled and detached,
    are in no process's RSS. memfd_create and shmget are refused (EPERM); shm_open's files land in
    the 16 MB /dev/shm. Control: without the filter both calls work in the sandbox."""
    probe = """
        import ctypes, os
        out = []
        try:
            os.close(os.memfd_create("fill")); out.append("memfd:ok")
        except OSError as e:
            out.append("memfd:" + str(e.errno))
        libc = ctypes.CDLL(None, use_errno=True)
        shm = libc.shmget(0, 1 << 20, 0o1600)  # IPC_PRIVATE, IPC_CREAT | 0600
        out.append("shmget:" + ("ok" if shm >= 0 else str(ctypes.get_errno())))
        if shm >= 0:
            libc.shmctl(shm, 0, None)  # IPC_RMID
        print(" ".join(out))
    """
    assert run(mode, probe).stdout.split() == ["memfd:1", "shmget:1"]
    monkeypatch.setattr(sandbox, "_seccomp_file", lambda: None)
    assert run(mode, probe).stdout.split() == ["memfd:ok", "shmget:ok"]


@pytest.mark.parametrize("mode", MODES)
def test_socket_buffers_cannot_be_enlarged(mode, monkeypatch):
    """With 256 open files and buffers raised to this machine's wmem_max (4 MB), one process queued
    1977 MB of socket buffers at 11 MB RSS (as `nobody`, where only the watchdog over RSS holds
    memory). SO_SNDBUF and SO_RCVBUF are refused; other socket options work. Control: without the
    filter the buffer grows."""
    probe = """
        import socket
        a, b = socket.socketpair()
        before = a.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
        out = []
        for option in (socket.SO_SNDBUF, socket.SO_RCVBUF):
            try:
                a.setsockopt(socket.SOL_SOCKET, option, before * 4); out.append("set")
            except PermissionError:
                out.append("refused")
        a.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        print(" ".join(out), a.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) > before)
    """
    assert run(mode, probe).stdout.split() == ["refused", "refused", "False"]
    monkeypatch.setattr(sandbox, "_seccomp_file", lambda: None)
    assert run(mode, probe).stdout.split() == ["set", "set", "True"]


@pytest.mark.parametrize("mode", MODES)
def test_open_files_are_capped_and_the_cap_cannot_be_raised(mode):
    """Issue 37: with the soft open-file limit raised to the hard one, Unix sockets queued 3 GB of
    kernel buffers at 16 MB RSS. RLIMIT_NOFILE is Policy.open_files, soft and hard: the probe raises
    its soft limit to the hard one (the attack) and past it, then makes socket pairs until refused:
    EMFILE within the 64. Control: outside the sandbox, with a soft limit of 64 under a hard one of
    1024, the same probe gets past 64."""
    probe = """
        import resource, socket
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard + 1, hard + 1)); raised = "raised"
        except (ValueError, OSError):
            raised = "kept"
        pairs, ended = [], "none"
        try:
            while len(pairs) < 200:
                pairs.append(socket.socketpair())
        except OSError as e:
            ended = e.errno
        print(soft, hard, raised, 2 * len(pairs) <= 64, ended)
    """
    policy = sandbox.Policy(open_files=64)
    assert run(mode, probe, policy=policy).stdout.split() == ["64", "64", "kept", "True", "24"]
    control = subprocess.run(
        ["prlimit", "--nofile=64:1024", "--", sys.executable, "-c", textwrap.dedent(probe)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert control.stdout.split()[:2] + control.stdout.split()[3:] == [
        "64",
        "1024",
        "False",
        "none",
    ], control.stderr


@pytest.mark.parametrize("mode", MODES)
def test_the_watchdog_counts_what_sockets_hold(mode, monkeypatch):
    """Without a cgroup the watchdog's sum is the only memory cap, and socket buffers are in no RSS
    (issue 37: Unix sockets queued 3 GB at 16 MB RSS). It charges every file-table slot of a process
    FD_BYTES (a Unix socket's largest buffer) and adds the TCP bytes queued in the sandbox's network
    namespace: a process that fills 100 Unix socket pairs and 8 loopback TCP connections is counted
    at least at its RSS plus all it queued. Control: counting resident memory alone (FD_BYTES 0, no
    TCP) stays below that."""
    monkeypatch.setattr(sandbox, "_memory_cgroup", lambda: None)
    code = textwrap.dedent("""
        import socket, time
        def fill(s, rounds):
            s.setblocking(False)
            n = 0
            for r in range(rounds):
                time.sleep(0.02 * (r > 0))  # a TCP window opens again once the receiver's side has taken data
                try:
                    while True:
                        n += s.send(b"x" * 65536)
                except BlockingIOError:
                    pass
            return n
        held, unix, tcp = [], 0, 0
        for _ in range(100):
            a, b = socket.socketpair(); held += [a, b]; unix += fill(a, 1)
        srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(8)
        for _ in range(8):
            c = socket.create_connection(srv.getsockname()); s, _ = srv.accept(); held += [c, s]; tcp += fill(c, 3)
        rss = int([l for l in open("/proc/self/status") if l.startswith("VmRSS")][0].split()[1]) * 1024
        print(rss, unix, tcp, flush=True)
        time.sleep(0.5)  # 25 polls
    """)  # noqa: E501

    def watched() -> tuple[int, list[int]]:
        group = sandbox.MemoryGroup(4 << 30, "test", watch_bytes=2 << 30)
        cmd = sandbox.wrap([sys.executable, "-c", code], readonly=[], userns=mode == "userns")
        if mode == "userns":
            cmd = unprivileged.command(cmd, {"PATH": "/usr/bin:/bin"})
        p = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
        )
        try:
            group.started(p.pid)
            out, err = p.communicate(timeout=120)
        finally:
            group.close()
        assert not group.hit() and len(out.split()) == 3, (out, err)
        return group.peak, [int(x) for x in out.split()]

    peak, (rss, unix, tcp) = watched()
    assert unix > 10 << 20 and tcp > 10 << 20 and peak >= rss + unix + tcp, (peak, rss, unix, tcp)
    monkeypatch.setattr(sandbox, "FD_BYTES", 0)
    monkeypatch.setattr(sandbox, "_tcp_queued", lambda pid: 0)
    peak, (rss, unix, tcp) = watched()
    assert peak < rss + unix + tcp, (peak, rss, unix, tcp)
