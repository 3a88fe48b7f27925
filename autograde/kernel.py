"""The grading kernel: ipykernel with resource limits, so one student's code cannot take the machine.

Started by the worker through the kernelspec it writes. Two ways:
- ``python -m autograde.kernel -f CONNECTION_FILE``: apply RLIMIT_AS (a runaway allocation becomes a
  MemoryError inside the cell instead of the machine's OOM killer) and RLIMIT_FSIZE, then run ipykernel;
- ``python -m autograde.kernel --sandbox SPEC.json -f CONNECTION_FILE`` (the default when grading): still as
  the grader, hand the kernel's folders to the sandbox user of this job's slot, then replace this process by
  the first way run inside ``autograde.sandbox`` (own user, namespaces, limits; sees only its notebook's
  folder, course_lib, the harness's check code and the model file). The kernel talks to nbgrader over Unix
  sockets (jupyter's ``ipc`` transport), since a sandbox has no network, not even the grader's loopback.
"""

import json
import os
import resource
import sys


def _limit(kind: int, env: str) -> None:
    value = int(os.environ.get(env, "0") or 0)
    if value > 0:
        resource.setrlimit(kind, (value, value))


def _sandboxed(spec_file: str, connection_file: str, extra: list[str]) -> None:
    """Exec the kernel inside the sandbox described by SPEC (see grade.Grader._kernel_spec)."""
    import shutil
    from pathlib import Path

    from autograde import sandbox

    spec = json.loads(Path(spec_file).read_text())
    slot = int(spec["slot"])
    root, runtime = Path(spec["root"]).resolve(), Path(spec["runtime"]).resolve()
    try:
        cwd = Path.cwd().resolve()  # the notebook's folder (nbclient starts the kernel there): where it may write
    except FileNotFoundError:
        raise SystemExit(f"refusing to start a sandboxed kernel: its folder {os.readlink('/proc/self/cwd')} "
                         "no longer exists") from None
    # Ownership goes to the sandbox user only in this job's own folders, never anywhere else: jupyter_client
    # may put the connection file in the system's temporary folder, so it is copied, not handed over.
    if cwd == root or root not in cwd.parents:
        raise SystemExit(f"refusing to start a sandboxed kernel: {cwd} is not inside the job folder {root}")
    if runtime.parent != sandbox.SOCKET_BASE.resolve():
        raise SystemExit(f"refusing to start a sandboxed kernel: {runtime} is not a socket folder of its own")
    own = runtime / ("kernel-" + Path(connection_file).name)
    shutil.copyfile(connection_file, own)
    for folder in (cwd, runtime):
        sandbox.prepare_writable(folder, slot)
    policy = sandbox.Policy(**spec["policy"])
    argv = [sys.executable, "-m", "autograde.kernel", "-f", str(own), *extra]  # extra: nbclient's own options
    cmd = sandbox.wrap(argv, writable=cwd, binds=[runtime], readonly=[Path(p) for p in spec["readonly"]],
                       policy=policy, slot=slot, env=spec["env"], hide=[Path(p) for p in spec["hide"]])
    os.execvp(cmd[0], cmd)


def main() -> None:
    """Apply limits from the environment, then run ipykernel exactly as ipykernel_launcher would."""
    if len(sys.argv) >= 5 and sys.argv[1] == "--sandbox" and sys.argv[3] == "-f":
        _sandboxed(sys.argv[2], sys.argv[4], sys.argv[5:])
        return
    _limit(resource.RLIMIT_AS, "AUTOGRADE_MEMORY_BYTES")
    _limit(resource.RLIMIT_FSIZE, "AUTOGRADE_FILE_BYTES")
    if sys.path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]  # as ipykernel_launcher: don't import from the notebook's folder while starting
    from ipykernel import kernelapp
    kernelapp.launch_new_instance()


if __name__ == "__main__":
    main()
