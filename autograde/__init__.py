"""Grading harness around nbgrader: release, grade, selfcheck (``python -m autograde --help``).

Importing this package is cheap and imports no nbgrader: the sandboxes import a few of its modules (the runner,
the kernel, the verification relay and answers' process: ``verify.SANDBOX_MODULES``), never ``autograde.hidden``.
"""

import sys

# jsonschema (under nbformat, hence under every grading process) builds a Lark grammar for its optional "iri"
# format check when imported: 2.2 s per process, for a format that no notebook schema uses. Declaring its
# provider absent makes jsonschema skip that one check (issue 10: each graded student starts three processes).
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
