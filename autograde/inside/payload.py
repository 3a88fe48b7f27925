"""One check asked of the verification's answers' process: decode its payload's cases, call the
student's function on them (course_lib.checks.engine.call_cases: the engine that runs the notebook's
own checks), encode the outcomes. Only the answers' process runs this
(autograde.inside.relay._answers); the grader writes the payload
(autograde.inside.codec.encode_cases) and reads the outcomes (autograde.boundary.decode_outcomes).
"""

from __future__ import annotations

import json
from typing import Callable

from autograde.inside.codec import decode, outcome_to_json
from course_lib.checks.engine import Case, call_cases


def run_encoded(
    fn: Callable,
    payload: str,
    report: Callable[[str], None] | None = None,
    report_steps: Callable[[str, int], None] | None = None,
) -> str:
    """Run ``fn`` on the cases of an ``encode_cases`` payload; return the outcomes as JSON text.

    ``report``: told each rule broken while ``fn`` runs, as it happens (``trace.Watch``);
    ``report_steps``: told (case label, lines so far) as a counted call passes 2^10 lines and each
    doubling after (``_StepCounter``)."""
    p = json.loads(payload)
    cases = [
        Case(
            args=decode(c["args"]),
            kwargs=decode(c["kwargs"]),
            label=c["label"],
            repeat=int(c["repeat"]),
            fresh=bool(c.get("fresh", False)),
            count_steps=bool(c.get("count_steps", False)),
            no_draw=bool(c.get("no_draw", False)),
        )
        for c in p["cases"]
    ]
    outs = call_cases(
        fn,
        cases,
        bool(p["allow_mutation"]),
        p.get("forbidden", ()),
        p.get("ops", ()),
        report,
        report_steps,
    )
    return json.dumps([outcome_to_json(o) for o in outs], allow_nan=False)
