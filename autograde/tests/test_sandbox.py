"""The sandbox: what student code can see and do when the grader runs it (Linux namespaces + rlimits).

Each test runs a small Python program in a sandbox and checks the effect from outside. They need root and
bubblewrap (as on the course's grading machines and in CI); without them the sandbox refuses to start,
which test_refuses_without_tools checks instead.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from autograde import sandbox
from autograde.course import REPO

pytestmark = pytest.mark.skipif(sandbox.unavailable() is not None,
                                reason=f"sandbox unavailable here: {sandbox.unavailable()}")


def run(tmp_path: Path, code: str, policy: sandbox.Policy = sandbox.Policy(), slot: int = 7, timeout: float = 60):
    work = tmp_path / "work"
    sandbox.prepare_writable(work, slot)
    cmd = sandbox.wrap([sys.executable, "-c", textwrap.dedent(code)], writable=work, policy=policy, slot=slot,
                       readonly=[REPO / "course_lib"], env={"PYTHONPATH": str(REPO)})
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def test_runs_as_an_unprivileged_user_that_sees_only_what_it_needs(tmp_path):
    secret = tmp_path / "gradebook.db"
    secret.write_text("scores")
    r = run(tmp_path, f"""
        import os
        print(os.getuid(), os.getgid(), os.getpid())
        print(open('/proc/self/status').read().split('CapEff:')[1].split()[0])
        for p in ['{secret}', '{REPO / "solutions"}', '/root/.cache', '{REPO / "autograde"}']:
            print(p, os.path.exists(p))
        import course_lib.model  # what a notebook legitimately needs is there
        print('ok')
    """)
    lines = r.stdout.split("\n")
    assert r.returncode == 0, r.stderr
    uid, gid, pid = lines[0].split()
    assert uid == gid == str(sandbox.FIRST_UID + 7) and int(pid) < 10  # own pid namespace
    assert int(lines[1], 16) == 0  # no capabilities
    assert all(line.endswith("False") for line in lines[2:6]), lines
    assert lines[6] == "ok"


def test_fork_bomb_stops_at_the_process_limit(tmp_path):
    r = run(tmp_path, """
        import os, time
        n = 0
        try:
            while True:
                if os.fork() == 0:
                    time.sleep(60)
                    os._exit(0)
                n += 1
        except OSError as e:
            print(n, type(e).__name__)
    """, policy=sandbox.Policy(max_processes=32))
    n, err = r.stdout.split()
    assert int(n) < 32 and err == "BlockingIOError"


def test_no_process_outlives_the_sandbox(tmp_path):
    marker = "sandbox-leftover-" + str(os.getpid())
    r = run(tmp_path, f"""
        import os, subprocess
        subprocess.Popen(['/bin/sh', '-c', 'exec -a {marker} sleep 120'], start_new_session=True)
        print('started')
    """)
    assert r.stdout.strip() == "started", r.stderr
    time.sleep(0.5)
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert marker not in ps


def test_memory_fill_becomes_a_memory_error(tmp_path):
    r = run(tmp_path, """
        try:
            x = bytearray(6 << 30)
            print('allocated')
        except MemoryError:
            print('MemoryError')
    """, policy=sandbox.Policy(memory_bytes=2 << 30))
    assert r.stdout.strip() == "MemoryError"


def test_huge_file_is_cut_at_the_file_size_limit(tmp_path):
    r = run(tmp_path, """
        import signal
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        try:
            with open('big', 'wb') as f:
                f.write(b'x' * (8 << 20))
        except OSError as e:
            print('refused', e.errno)
    """, policy=sandbox.Policy(file_bytes=1 << 20))
    assert r.stdout.startswith("refused")
    assert (tmp_path / "work" / "big").stat().st_size <= 1 << 20


def test_cannot_signal_the_grader(tmp_path):
    r = run(tmp_path, f"""
        import os, signal
        try:
            os.kill({os.getpid()}, signal.SIGKILL)
            print('sent')
        except ProcessLookupError:
            print('no such process')
        print(os.getppid())
    """)
    assert r.stdout.split("\n")[0] == "no such process"  # the grader's pid does not exist in there


def test_no_network_not_even_the_graders_loopback(tmp_path):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    try:
        r = run(tmp_path, f"""
            import socket
            try:
                socket.create_connection(('127.0.0.1', {port}), timeout=2)
                print('connected')
            except OSError as e:
                print('refused')
        """)
    finally:
        server.close()
    assert r.stdout.strip() == "refused"


def test_readonly_mounts_cannot_be_written(tmp_path):
    r = run(tmp_path, f"""
        try:
            open('{REPO / "course_lib" / "x.py"}', 'w')
            print('wrote')
        except OSError:
            print('refused')
    """)
    assert r.stdout.strip() == "refused"
    assert not (REPO / "course_lib" / "x.py").exists()


def test_hidden_folders_are_empty_inside(tmp_path):
    work = tmp_path / "work"
    sandbox.prepare_writable(work, 3)
    cmd = sandbox.wrap([sys.executable, "-c", f"import os; print(os.listdir('{REPO / 'autograde' / 'references'}'))"],
                       writable=work, readonly=[REPO / "autograde"], slot=3,
                       hide=[REPO / "autograde" / "references"])
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "[]", r.stderr
    assert any((REPO / "autograde" / "references").iterdir())  # outside, the references are still there


def test_shared_folders_are_never_handed_to_a_sandbox_user(tmp_path):
    """Regression: a kernel launcher once chowned the folder of jupyter's connection file, which was /tmp."""
    import tempfile
    for shared in ["/", tempfile.gettempdir(), "/tmp", str(Path.home()), "/usr", str(tmp_path.parent.parent)]:
        with pytest.raises(ValueError, match="refusing"):
            sandbox.prepare_writable(Path(shared), 3)
    before = os.stat(tempfile.gettempdir()).st_uid
    sandbox.prepare_writable(tmp_path / "job" / "work", 3)  # a job's own folder is fine
    assert os.stat(tmp_path / "job" / "work").st_uid == sandbox.FIRST_UID + 3
    assert os.stat(tempfile.gettempdir()).st_uid == before
