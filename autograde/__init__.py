"""Grading harness around nbgrader: release, grade, selfcheck (``python -m autograde --help``).

Importing this package is cheap and imports no nbgrader: the sandboxes run ``python -m
autograde.inside.<name>``, which runs this file first; of the harness they see only it and
``autograde/inside/`` (what runs inside a sandbox or a limited child), never ``autograde.hidden``
(autograde/tests/test_layout.py).
"""

import sys

# jsonschema (under nbformat, hence under every grading process) builds a Lark grammar for its
# optional "iri" format check when imported: 2.2 s per process, for a format that no notebook schema
# uses. Declaring its provider absent makes jsonschema skip that one check (issue 10: each graded
# student starts three processes).
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
