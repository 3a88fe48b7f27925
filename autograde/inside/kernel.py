"""The grading kernel: ipykernel with resource limits, started by autograde.inside.runner inside a
sandbox.

``python -m autograde.inside.kernel -f CONNECTION_FILE``: apply RLIMIT_AS and RLIMIT_FSIZE from the
environment (AUTOGRADE_MEMORY_BYTES, AUTOGRADE_FILE_BYTES; the sandbox sets its own limits already,
this serves `grade --no-sandbox`), so a runaway allocation becomes a MemoryError inside the cell,
then run ipykernel.
"""

import os
import resource
import sys


def _limit(kind: int, env: str) -> None:
    value = int(os.environ.get(env, "0") or 0)
    if value > 0:
        resource.setrlimit(kind, (value, value))


def main() -> None:
    """Apply limits from the environment, then run ipykernel exactly as ipykernel_launcher would."""
    _limit(resource.RLIMIT_AS, "AUTOGRADE_MEMORY_BYTES")
    _limit(resource.RLIMIT_FSIZE, "AUTOGRADE_FILE_BYTES")
    if sys.path and sys.path[0] in ("", os.getcwd()):
        # as ipykernel_launcher: don't import from the notebook's folder while starting
        del sys.path[0]
    from ipykernel import kernelapp

    kernelapp.launch_new_instance()


if __name__ == "__main__":
    main()
