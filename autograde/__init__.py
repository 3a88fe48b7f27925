"""Grading harness around nbgrader: release, grade, selfcheck (``python -m autograde --help``).

Importing this package is cheap and imports no nbgrader: the grading kernel imports ``autograde.hidden``.
"""
