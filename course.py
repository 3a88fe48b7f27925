"""The course's one entry point, in Python (standard library only), so that it runs where there is
no bash.

    python -m course lab [--no-browser] [jupyter args]   open the course in JupyterLab
    python -m course lab --smoke                         start JupyterLab on 127.0.0.1, check it
    answers, print OK, stop python -m course test [pytest args]                  run the whole test
    suite (exit non-zero on any failure) python -m course setup                               only
    the set-up

(`./course ...` is the same on Linux and macOS: that bash script only picks the interpreter and
calls this file; `python course.py ...` works too.) Both `lab` and `test` set up first (idempotent:
a second run does ~no work): .venv (made with the Python running this file, or $PYTHON through
./course), torch, `pip install -e '.[grading,test]'`, the model file (python -m course_lib.weights
fetch), nbgrader's JupyterLab extensions; as root with apt-get, the missing system packages:
bubblewrap and util-linux (grading sandbox), and for `test` also chromium (the browser test).
In the student edition (written by `python -m autograde publish`: no autograde/ folder) the same
file installs `pip install -e '.[lab,test]'` instead and skips what only grading needs (nbgrader's
extensions, bubblewrap, chromium); `test` then runs the edition's own tests/.
Environment: CI=true (no prompts, no browser); COURSE_NO_SETUP=1 (skip set-up, use the Python
running this file as it is, e.g. a conda env); COURSE_TORCH (pip spec for torch on Linux x86_64
without CUDA; default below).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path

if sys.version_info < (3, 10):  # pragma: no cover - the message is the point
    sys.exit(f"need Python >= 3.10; this is {platform.python_version()} ({sys.executable})")

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
STAMP = VENV / ".course-setup"
WINDOWS = os.name == "nt"
# The instructor's kit holds the grading harness; the student edition (autograde publish) does not.
INSTRUCTOR = (ROOT / "autograde").is_dir()
EXTRAS = "grading,test" if INSTRUCTOR else "lab,test"
# On Linux x86_64 without CUDA an unpinned torch resolves to a multi-GB CUDA build; this pin
# resolves to the CPU wheel where one is on local disk (as on the course's lab machines). ./course
# passes the same default.
DEFAULT_CPU_TORCH = "torch==2.13.0"
# local package indexes make pip print one such line per ignored link
PIP_NOISE = "WARNING: Location '"


class SetupError(Exception):
    """A set-up step failed; the message says which and what to do."""


def say(msg: str) -> None:
    """One progress line, in bold where the terminal shows it."""
    bold = sys.stdout.isatty() and not WINDOWS
    print(f"\033[1m[course]\033[0m {msg}" if bold else f"[course] {msg}", flush=True)


def venv_python() -> Path:
    """The interpreter inside .venv (bin/python, or Scripts\\python.exe on Windows)."""
    return VENV / ("Scripts/python.exe" if WINDOWS else "bin/python")


def root_flag() -> list[str]:
    """Jupyter refuses to run as root unless told; containers, Colab-like VMs and CI often run as
    root."""
    return ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []


def pip_quiet(py: str, *args: str) -> int:
    """`py -m pip ...` minus the flood of "Location ... is ignored" warnings; returns pip's exit
    status."""
    extra = ["--progress-bar", "off"] if os.environ.get("CI") == "true" else []
    proc = subprocess.Popen(
        [py, "-m", "pip", "--no-input", "--disable-pip-version-check", *args, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if not line.startswith(PIP_NOISE):
            sys.stdout.write(line)
    return proc.wait()


def setup_hash() -> str:
    """Anything that changes what pip would install: the package list, the entry points, which
    packages exist."""
    h = hashlib.sha256()
    for name in ("pyproject.toml", "course", "course.py"):
        path = ROOT / name
        if path.exists():
            h.update(path.read_bytes())
    h.update("\n".join(d for d in ("course_lib", "autograde") if (ROOT / d).is_dir()).encode())
    return h.hexdigest()


def linux_x86_without_cuda() -> bool:
    """Where an unpinned `pip install torch` would pull a CUDA build nobody can use."""
    return (
        platform.system() == "Linux"
        and platform.machine() == "x86_64"
        and shutil.which("nvidia-smi") is None
    )


def setup_venv() -> str:
    """Create .venv if needed and install the course into it unless nothing changed; returns its
    python."""
    py = venv_python()
    if not py.exists():
        say(f"creating .venv with Python {platform.python_version()} ({sys.executable})")
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    want = setup_hash()
    if STAMP.exists() and STAMP.read_text().strip() == want:
        return str(py)
    has_torch = (
        subprocess.run(
            [str(py), "-c", "import importlib.metadata as m; m.version('torch')"],
            capture_output=True,
        ).returncode
        == 0
    )
    if linux_x86_without_cuda() and not has_torch:
        torch_spec = os.environ.get("COURSE_TORCH") or DEFAULT_CPU_TORCH
        say(f"installing {torch_spec} (CPU build) ...")
        if pip_quiet(str(py), "install", "-q", torch_spec) != 0:
            raise SetupError(f"pip could not install {torch_spec}")
    say(f"installing the course (pip install -e '.[{EXTRAS}]'; 1-2 minutes the first time) ...")
    if pip_quiet(str(py), "install", "-q", "-e", f".[{EXTRAS}]") != 0:
        raise SetupError("pip install failed (see above)")
    STAMP.write_text(want + "\n")
    return str(py)


def setup_model(py: str) -> None:
    """Fetch and verify the model file (a no-op once it is in the cache)."""
    if (ROOT / "course_lib" / "weights.py").exists():
        if subprocess.run([py, "-m", "course_lib.weights", "fetch"], cwd=ROOT).returncode != 0:
            raise SetupError("could not fetch the model file (see above)")


def setup_nbgrader_extensions(py: str) -> None:
    """nbgrader's JupyterLab extensions (a plain `pip install` can leave them out): reinstall if
    missing."""
    prefix = Path(
        subprocess.run(
            [py, "-c", "import sys; print(sys.prefix)"], capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    if (prefix / "share/jupyter/labextensions/@jupyter/nbgrader").is_dir() and (
        prefix / "etc/jupyter/jupyter_server_config.d/nbgrader.json"
    ).is_file():
        return
    say("installing nbgrader's JupyterLab extensions ...")
    if pip_quiet(py, "install", "-q", "--force-reinstall", "--no-deps", "nbgrader==0.9.6") != 0:
        raise SetupError("could not reinstall nbgrader")


def apt_install(*packages: str) -> None:
    """Debian/Ubuntu packages, only as root with apt-get (CI containers, lab images); elsewhere say
    what is missing."""
    is_root = hasattr(os, "geteuid") and os.geteuid() == 0
    if not is_root or shutil.which("apt-get") is None:
        say(
            f"missing system packages: {' '.join(packages)} (install them with your package "
            "manager; the tests that need them skip)"
        )
        return
    say(f"installing system packages: {' '.join(packages)} ...")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    install = ["apt-get", "install", "-y", "-q", "--no-install-recommends", *packages]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env}
    # Not fatal: the course itself runs without these; the tests that need them say so.
    if subprocess.run(install, **quiet).returncode == 0:
        return
    if (
        subprocess.run(["apt-get", "update", "-q"], **quiet).returncode == 0
        and subprocess.run(install, stdout=subprocess.DEVNULL, env=env).returncode == 0
    ):
        return
    say(f"warning: apt-get could not install: {' '.join(packages)} (continuing)")


def setup_system() -> None:
    """The grading sandbox needs bubblewrap (bwrap) and util-linux (unshare, prlimit); Linux
    only."""
    if platform.system() != "Linux":
        return
    want = []
    if shutil.which("bwrap") is None:
        want.append("bubblewrap")
    if shutil.which("unshare") is None or shutil.which("prlimit") is None:
        want.append("util-linux")
    if want:
        apt_install(*want)


def setup_browser() -> None:
    """tests/test_browser.py drives Debian's Chromium (never a test tool's own download); only
    `test` needs it."""
    if platform.system() == "Linux" and not os.access("/usr/bin/chromium", os.X_OK):
        apt_install("chromium")


def setup() -> str:
    """Everything `lab` and `test` need; returns the Python to run them with."""
    if INSTRUCTOR:
        setup_system()
    if os.environ.get("COURSE_NO_SETUP") == "1":
        say(f"COURSE_NO_SETUP=1: using {sys.executable} as it is")
        return sys.executable
    py = setup_venv()
    # Like activating the venv: tools that run the venv's commands by name (nbgrader runs `alembic`,
    # notebooks run `pip`) must find them.
    os.environ["VIRTUAL_ENV"] = str(VENV)
    os.environ["PATH"] = str(Path(py).parent) + os.pathsep + os.environ.get("PATH", "")
    setup_model(py)
    if INSTRUCTOR:
        setup_nbgrader_extensions(py)
    return py


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def lab_smoke(py: str) -> int:
    """Start JupyterLab on 127.0.0.1 (scratch runtime dir), wait for /api/status and /lab, print OK,
    stop it."""
    port, token = _free_port(), secrets.token_hex(16)
    with tempfile.TemporaryDirectory() as tmp:
        # Runtime files and workspaces go to a scratch folder: a smoke run leaves nothing behind.
        env = {**os.environ, "JUPYTER_RUNTIME_DIR": tmp, "JUPYTERLAB_WORKSPACES_DIR": tmp}
        log_path = Path(tmp) / "log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                [
                    py,
                    "-m",
                    "jupyterlab",
                    "--no-browser",
                    "--ip=127.0.0.1",
                    f"--port={port}",
                    "--ServerApp.port_retries=0",
                    f"--IdentityProvider.token={token}",
                    f"--ServerApp.root_dir={ROOT}",
                    *root_flag(),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
            )
            say(
                f"smoke: JupyterLab (pid {proc.pid}) on http://127.0.0.1:{port}, waiting for "
                "/api/status ..."
            )
            try:
                problem = _wait_for_lab(proc, port, token)
            finally:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        if problem is None:
            print("OK", flush=True)
            return 0
        print(problem, file=sys.stderr)
        print("--- JupyterLab log ---", file=sys.stderr)
        print("\n".join(log_path.read_text(errors="replace").splitlines()[-40:]), file=sys.stderr)
        return 1


def _wait_for_lab(
    proc: subprocess.Popen, port: int, token: str, timeout_s: float = 120
) -> str | None:
    """None once /api/status says started and /lab serves the JupyterLab page; else what went
    wrong."""

    def get(path: str) -> tuple[int, bytes]:
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}{path}", headers={"Authorization": f"token {token}"}
        )
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.read()

    deadline = time.monotonic() + timeout_s
    while True:
        if proc.poll() is not None:
            return "JupyterLab exited before answering"
        try:
            status, body = get("/api/status")
            if status == 200 and "started" in json.loads(body):
                break
        except (OSError, ValueError):
            pass
        if time.monotonic() > deadline:
            return f"JupyterLab did not answer /api/status within {timeout_s:.0f} s"
        time.sleep(0.5)
    status, page = get("/lab")
    if status != 200 or b"JupyterLab" not in page:
        return f"/lab answered {status} without the JupyterLab page"
    return None


def run_replacing_this_process(argv: list[str]) -> int:
    """exec on POSIX (Ctrl-C goes straight to the program); a child process on Windows, where exec
    is emulated."""
    sys.stdout.flush()
    if WINDOWS:
        return subprocess.call(argv)
    os.execv(argv[0], argv)
    return 0  # not reached


def cmd_lab(args: list[str]) -> int:
    """Set up, then open JupyterLab on the course (or only check that it starts: --smoke)."""
    smoke = "--smoke" in args
    args = [a for a in args if a != "--smoke"]
    py = setup()
    if smoke:
        return lab_smoke(py)
    if os.environ.get("CI") == "true":
        args.append("--no-browser")
    start = "/lab/tree/notebooks" if (ROOT / "notebooks").is_dir() else "/lab"
    say("starting JupyterLab on the course (Ctrl-C twice to stop) ...")
    return run_replacing_this_process(
        [
            py,
            "-m",
            "jupyterlab",
            f"--ServerApp.root_dir={ROOT}",
            f"--LabApp.default_url={start}",
            *root_flag(),
            *args,
        ]
    )


def cmd_test(args: list[str]) -> int:
    """Set up, then run the whole test suite and print what ran; non-zero on any failure."""
    py = setup()
    if INSTRUCTOR:
        setup_browser()
    targets = ["tests"] + (["autograde/tests"] if (ROOT / "autograde" / "tests").is_dir() else [])
    results, failed = [], False
    say(f"running: pytest -q {' '.join(targets)} {' '.join(args)}".rstrip())
    # --durations: the slowest tests are named in every CI log, so the 30-minute budget can be kept
    # by measurement.
    if (
        subprocess.run(
            [py, "-m", "pytest", "-q", "--durations=25", *targets, *args], cwd=ROOT
        ).returncode
        == 0
    ):
        results.append(f"PASS  pytest -q {' '.join(targets)}")
    else:
        results.append(f"FAIL  pytest -q {' '.join(targets)}")
        failed = True
    if not INSTRUCTOR:
        pass  # the student edition has no grader to self-check
    elif (ROOT / "autograde" / "tests" / "test_selfcheck.py").exists():
        # pytest's test_course_selfcheck already ran the same selfcheck for every assignment (~2.5
        # min).
        results.append(
            "----  python -m autograde selfcheck: ran inside pytest "
            "(autograde/tests/test_selfcheck.py)"
        )
    else:
        help_text = subprocess.run(
            [py, "-m", "autograde", "--help"], cwd=ROOT, capture_output=True, text=True
        ).stdout
        if "selfcheck" in help_text:
            say("running: python -m autograde selfcheck")
            ok = subprocess.run([py, "-m", "autograde", "selfcheck"], cwd=ROOT).returncode == 0
            results.append(f"{'PASS' if ok else 'FAIL'}  python -m autograde selfcheck")
            failed |= not ok
        else:
            results.append("SKIP  python -m autograde selfcheck (no such command yet)")
    say("summary:")
    for line in results:
        print(f"    {line}")
    return 1 if failed else 0


def usage() -> str:
    """The command summary at the top of this file."""
    return textwrap.dedent(__doc__.split("\n\n", 1)[1].split("\n\n(")[0]).strip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    """Dispatch `lab`, `test`, `setup` or help; returns the exit status."""
    argv = sys.argv[1:] if argv is None else argv
    command, rest = (argv[0], argv[1:]) if argv else ("", [])
    os.chdir(ROOT)
    try:
        if command == "lab":
            return cmd_lab(rest)
        if command == "test":
            return cmd_test(rest)
        if command == "setup":
            setup()
            say("set-up done")
            return 0
    except (SetupError, subprocess.CalledProcessError) as e:
        bold = sys.stderr.isatty() and not WINDOWS
        print(
            f"\033[1;31m[course] error:\033[0m {e}" if bold else f"[course] error: {e}",
            file=sys.stderr,
        )
        return 1
    if command in ("-h", "--help", "help", ""):
        print(usage(), end="")
        return 0
    print(usage(), end="", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
