"""Colab set-up: install the course's dependencies next to Colab's own torch, then fetch the model
file.

Each notebook's first code cell bootstraps this module (course_lib is not installed yet on a fresh
Colab runtime, so the cell itself installs the course package with ``--no-deps``, then calls
``setup()``)::

    import os
    if "COLAB_RELEASE_TAG" in os.environ:  # only on Colab; elsewhere this cell does nothing
        COURSE_GIT_URL = "git+https://github.com/OWNER/how-llms-work.git"
        %pip install -q --no-deps {COURSE_GIT_URL}
        from course_lib.colab import setup
        setup()

Why not ``pip install <course>`` with its dependencies: Colab ships its own torch build (CUDA,
matched to the runtime's driver) and numpy; pip could replace either to satisfy a bound, which costs
minutes and can break the runtime. ``setup()`` therefore installs only the requirements that are
missing or out of bounds, never torch, with the torch and numpy already installed pinned to their
exact versions.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys

COURSE_GIT_URL = "git+https://github.com/OWNER/how-llms-work.git"
"""Placeholder: the course's git URL. Replace OWNER (here, in every notebook's first cell and in
README) when the repository is published; `tests/test_colab.py` checks that the three agree."""

CELL = f'''# Colab only: install the course (keeping Colab's torch) and fetch the model. Elsewhere this does nothing.
import os
if "COLAB_RELEASE_TAG" in os.environ:
    COURSE_GIT_URL = "{COURSE_GIT_URL}"  # see README, "Colab"
    %pip install -q --no-deps {{COURSE_GIT_URL}}
    from course_lib.colab import setup
    setup()'''  # noqa: E501
"""Every notebook's first code cell (tests/test_colab.py checks the notebooks against it)."""

DISTRIBUTION = "how-llms-work"
NEVER_INSTALL = frozenset({"torch"})  # Colab's build (CUDA, matched to the runtime) stays
# already imported by Colab's kernel: pip may not replace them
PIN_IF_PRESENT = ("torch", "numpy")


def on_colab() -> bool:
    """True inside a Colab runtime (its env variable, or its module already imported by the
    kernel)."""
    return "COLAB_RELEASE_TAG" in os.environ or "google.colab" in sys.modules


def _canon(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


def _requirement_class():
    """packaging's Requirement; pip's vendored copy where packaging itself is not installed."""
    try:
        from packaging.requirements import Requirement
    except ImportError:
        from pip._vendor.packaging.requirements import Requirement
    return Requirement


def runtime_requirements(dist: str = DISTRIBUTION) -> list[str]:
    """The course's own requirements (no extras) as declared by the installed package's metadata."""
    Requirement = _requirement_class()
    out = []
    for line in importlib.metadata.requires(dist) or []:
        req = Requirement(line)
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue  # an extra's requirement (grading, test, online): not needed to do the course
        out.append(str(req))
    return out


def to_install(requirements: list[str], installed: dict[str, str]) -> list[str]:
    """The requirements pip must install: missing or out of bounds, never torch (``installed``: name
    -> version)."""
    Requirement = _requirement_class()
    wanted = []
    have = {_canon(k): v for k, v in installed.items()}
    for line in requirements:
        req = Requirement(line)
        name = _canon(req.name)
        if name in NEVER_INSTALL:
            continue
        if name in have and req.specifier.contains(have[name], prereleases=True):
            continue
        wanted.append(line)
    return wanted


def installed_versions() -> dict[str, str]:
    """Every installed distribution: canonical name -> version."""
    out = {}
    for d in importlib.metadata.distributions():
        name = d.metadata["Name"]
        if name:
            out.setdefault(_canon(name), d.version)
    return out


def constraints(installed: dict[str, str]) -> list[str]:
    """Pins (``name==version``) of the torch and numpy already installed, so no dependency can
    replace them."""
    return [f"{n}=={installed[n]}" for n in PIN_IF_PRESENT if n in installed]


def setup(force: bool = False, fetch_model: bool = True, quiet: bool = True) -> None:
    """On Colab (or with ``force``): install the course's missing requirements without touching
    torch, then fetch and verify the model file. Does nothing elsewhere."""
    if not (force or on_colab()):
        return
    have = installed_versions()
    todo = to_install(runtime_requirements(), have)
    if todo:
        print(
            f"[course] installing {len(todo)} package(s) next to torch "
            f"{have.get('torch', '(none)')}: " + ", ".join(todo)
        )
        # The pins go in as requirements that are already satisfied (a no-op for pip), which forbids
        # the resolver to replace them; unlike `-c FILE` this leaves any constraint file the
        # machine's pip config names alone.
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            *(["-q"] if quiet else []),
            *todo,
            *constraints(have),
        ]
        subprocess.run(cmd, check=True)
        importlib.invalidate_caches()
    course_lib = sys.modules.get("course_lib")
    if course_lib is not None and getattr(course_lib, "_MISSING", None) is not None:
        # imported before its requirements were there: import it again, fully
        importlib.reload(course_lib)
    if fetch_model:
        # A separate process: the weights module imports torch and the new packages from a clean
        # start.
        subprocess.run([sys.executable, "-m", "course_lib.weights", "fetch"], check=True)
    print("[course] ready")
