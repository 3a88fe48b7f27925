"""Everything of the harness that runs inside a sandbox or a limited child, beside untrusted code or
on its bytes.

The tree is the trust boundary: a file here runs with the student's code (or reads a submission's
bytes); a file of autograde/ outside this folder runs only in the grader, and reads what comes from
here only through autograde.boundary.

- ``runner`` + ``kernel``: sandbox 1, the kernel that runs the notebook top to bottom (``python -m``
RUNNER);
- ``relay``: sandbox 2, the verification: the relay (``_child``, ``_relay``: holds the grader's
pipes, runs no
  cell) and the answers' process (``_answers``: runs the student's cells, answers one check at a
  time);
- ``intake``: the intake child (prlimit, not a sandbox): parses and reads the submitted bytes;
- ``payload``: one check asked of the answers' process (decode its cases, call the answer, encode
the outcomes);
- ``wire``: the format both sides speak (frames, side records, the relay's reader); ``codec``: how
values, check
  inputs and outcomes are written as JSON (moved out of course_lib: students never need it);
  ``cells``: which cells are tests and demos, read alike on both sides.

The whole folder is mounted read-only into every sandbox (autograde.verify.course_sandbox), with
autograde/__init__.py and course_lib/. Its modules import nothing but the standard library, the
notebook libraries (nbformat, nbclient, ipykernel, IPython, torch, numpy) and course_lib, and the
trusted side imports from here only the entry points' names below, ``wire``, ``codec``, ``cells``
and the readers of a submission's text, ``sanitize`` and ``scan``, which the intake child and the
grader both use (autograde/tests/test_layout.py holds both rules).
This file imports nothing: the trusted side reads the names without running any module of the
package.
"""

# python -m RUNNER: sandbox 1 (job on stdin, one framed report on stdout)
RUNNER = "autograde.inside.runner"
KERNEL = "autograde.inside.kernel"  # the kernel the runner starts (its kernelspec's argv)
RELAY = "autograde.inside.relay"  # python -m RELAY child: sandbox 2, the verification relay
INTAKE = "autograde.inside.intake"  # python -m INTAKE: the intake child

ENTRY_POINTS = (RUNNER, KERNEL, RELAY, INTAKE)
