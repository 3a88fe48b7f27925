"""Hidden checks: one module per topic (``autograde/hidden/<topic>.py``) defining ``ASSIGNMENT`` and
``CHECKS``.

A hidden check is a ``course_lib.checks.engine.Check`` whose cases normally carry no expected
values: those are the outputs of the reference solution (the function ``Check.reference_name``
defined in ``solutions/<ASSIGNMENT>/<ASSIGNMENT>.ipynb``), stored by ``python -m autograde release``
in ``autograde/references/<ASSIGNMENT>.json`` (tagged JSON, never pickle). A case that sets
``Case.expected`` (e.g. a probability vector for a sampler) keeps its own value. In a notebook's
test cell::

    ### BEGIN HIDDEN TESTS
    from autograde.hidden import hidden_check
    hidden_check("softmax_hidden", softmax)
    ### END HIDDEN TESTS

Hidden check names must differ from each other across topics (the registry refuses duplicates). A
new topic's module is named in ``CHECK_MODULES`` below, the registry's one list
(autograde/tests/test_registries.py).
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any, Callable

from autograde.inside.codec import decode, encode
from course_lib.checks.engine import MISSING, Case, Registry, evaluate

FORMAT = 2
# The registry of hidden checks (HIDDEN reads these names; _twins is a helper the modules import):
# one module per notebook, each with ASSIGNMENT and CHECKS
CHECK_MODULES = (
    "pipeline_trace",
    "logits_softmax",
    "sampling",
    "generation_loop",
    "debugging_generation",
)


def case_fingerprint(case: Case) -> dict:
    """What a stored expected value is valid for: the case's inputs, in a form that is the same on
    every CPU.

    Inputs made by float arithmetic (a softmax of seeded logits) differ in their last bits between
    processors, so an exact hash of them would call every reference stale on another machine. The
    fingerprint is an exact sha256 of everything but the floats (structure, shapes, dtypes, ints,
    strings) plus a few sums over the floats, compared with a tolerance (``same_inputs``).
    """
    floats: list[float] = []

    def strip(x: Any) -> Any:
        if type(x) is float:
            floats.append(x)
            return "<float>"
        if isinstance(x, list):
            return [strip(v) for v in x]
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items()}
        return x

    skeleton = strip(encode((tuple(case.args), dict(case.kwargs), case.repeat)))
    blob = json.dumps(skeleton, sort_keys=True, allow_nan=False)
    stats = [0.0, 0.0, 0.0, 0.0]
    for i, x in enumerate(floats):
        # sum, sum of sizes, a position-weighted sum (catches reordering), and log sizes (catches
        # tiny values)
        for k, term in enumerate((x, abs(x), x * math.cos(i), math.log(abs(x) + 1e-30))):
            stats[k] += term
    return {
        "inputs_sha256": hashlib.sha256(blob.encode()).hexdigest(),
        "inputs_floats": [len(floats), *stats],
    }


def same_inputs(stored: dict, fresh: dict) -> bool:
    """Whether two case fingerprints describe the same inputs (floats equal up to rounding
    noise)."""
    if stored.get("inputs_sha256") != fresh["inputs_sha256"]:
        return False
    a, b = stored.get("inputs_floats"), fresh["inputs_floats"]
    if a is None or len(a) != len(b) or a[0] != b[0]:
        return False
    n = b[0]
    # rounding noise is ~1e-7 relative per float32 value; the log-size sum's scale is ~69 per value
    scales = [b[2], b[2], b[2], 70.0 * n]
    return all(abs(x - y) <= 1e-5 * scale + 1e-12 for x, y, scale in zip(a[1:], b[1:], scales))


class HiddenRegistry(Registry):
    """Hidden checks of a package plus the folder of stored reference outputs they compare
    against."""

    def __init__(self, package: str, references_dir: Path):
        super().__init__(package)
        self.references_dir = Path(references_dir)
        self._refs: dict[str, dict] = {}

    def assignment_of(self, name: str) -> str:
        """The ASSIGNMENT declared by the module defining hidden check ``name``."""
        chk, module = self.lookup(name)
        if not isinstance(getattr(module, "ASSIGNMENT", None), str):
            raise ValueError(f"{module.__name__} must define ASSIGNMENT = '<assignment id>'")
        return module.ASSIGNMENT

    def reference_path(self, assignment: str) -> Path:
        """Where the stored reference outputs of an assignment live."""
        return self.references_dir / f"{assignment}.json"

    def load_references(self, assignment: str) -> dict:
        """The stored references of an assignment (read once per registry)."""
        if assignment not in self._refs:
            path = self.reference_path(assignment)
            if not path.exists():
                raise FileNotFoundError(f"{path} is missing: run `python -m autograde release`")
            self._refs[assignment] = json.loads(path.read_text())
        return self._refs[assignment]

    def expected_values(self, name: str, cases: list[Case] | None = None) -> list[Any]:
        """Decoded expected value of each case of hidden check ``name``; RuntimeError if stale."""
        chk = self.get(name)
        cases = chk.cases() if cases is None else cases
        stored = self.load_references(self.assignment_of(name))["checks"].get(name)
        stale = f"references for hidden check {name!r} are stale: run `python -m autograde release`"
        if stored is None or len(stored["cases"]) != len(cases):
            raise RuntimeError(stale)
        out = []
        for case, s in zip(cases, stored["cases"]):
            if s["label"] != case.label or not same_inputs(s, case_fingerprint(case)):
                raise RuntimeError(stale)
            if case.raises is not None or case.expected is not MISSING:
                out.append(case.expected if case.expected is not MISSING else None)
            else:
                out.append(decode(s["expected"]))
        return out

    def hidden_check(self, name: str, fn: Callable) -> None:
        """Notebook one-liner: run hidden check ``name`` on the student's ``fn``; raise CheckFailed
        if it fails."""
        chk = self.get(name)
        cases = chk.cases()
        evaluate(chk, fn, self.expected_values(name, cases))


HIDDEN = HiddenRegistry(__name__, Path(__file__).resolve().parents[1] / "references")
hidden_check = HIDDEN.hidden_check
