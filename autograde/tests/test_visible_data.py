"""The stored expected values of visible checks equal a fresh computation by code that does not ship
(< 1 s).

"Equal" is bounded by the arithmetic, not by one machine's bits: the truth is a float64 computation
whose summation order depends on the BLAS kernels of the CPU (CI's machine and ours differ in the
last bit of some float64 outputs). Rounding a float64 value that moved by ~1e-16 to float32 moves it
by at most one float32 ulp, and a float64 output may move by a few float64 ulps of the O(1) terms it
sums (|y| <= max|v| ~ 4 here), so a float64 entry may differ by 1e-12 at most: 1000x below the rtol
1e-9 its visible check grants. Any real change to the inputs, the spec or the truth moves values by
far more than either bound.
"""

import numpy as np

from autograde.visible_data import attention_data, render


def _dtype_of(label):
    from course_lib.checks.generation_loop import ATTENTION_SPEC

    return {row[0]: row[-1] for row in ATTENTION_SPEC}[label]


def _offenders(stored: dict, fresh: dict) -> list[str]:
    """Labels whose stored shape or values differ from the fresh ones by more than the arithmetic
    allows."""
    import torch

    bad = [f"{l}: missing or extra" for l in stored.keys() ^ fresh.keys()]
    for label in stored.keys() & fresh.keys():
        if stored[label]["shape"] != fresh[label]["shape"] or len(stored[label]["y"]) != len(
            fresh[label]["y"]
        ):
            bad.append(f"{label}: shape")
            continue
        a, b = np.array(stored[label]["y"]), np.array(fresh[label]["y"])
        if _dtype_of(label) == torch.float32:
            bound = np.spacing(np.abs(b).astype(np.float32)).astype(np.float64)  # one float32 ulp
        else:
            bound = np.full_like(b, 1e-12)
        worst = float(np.max(np.abs(a - b) - bound))
        if worst > 0:
            bad.append(f"{label}: a value is {worst:.3g} past its bound")
    return bad


def test_stored_attention_outputs_are_up_to_date():
    from course_lib.checks import _attention_data

    assert _offenders(_attention_data.DATA, attention_data()) == [], (
        "run `python -m autograde.visible_data`"
    )


def test_bound_catches_a_real_change():
    """The comparison is not vacuous: two float32 ulps, or 1e-11 in float64, or a dropped value fail
    it."""
    import copy

    from course_lib.checks import _attention_data

    fresh = attention_data()
    for label, nudge in [
        (next(l for l in fresh if "decode step" in l), None),
        (next(l for l in fresh if "float64" in l), 1e-11),
    ]:
        moved = copy.deepcopy(_attention_data.DATA)
        y0 = moved[label]["y"][0]
        if nudge is None:  # two float32 ulps up
            y0 = float(np.nextafter(np.nextafter(np.float32(y0), np.float32(10)), np.float32(10)))
        else:
            y0 = y0 + nudge
        moved[label]["y"][0] = y0
        bad = _offenders(moved, fresh)
        assert len(bad) == 1 and bad[0].startswith(f"{label}: a value is "), bad
    short = copy.deepcopy(_attention_data.DATA)
    short[label]["y"].pop()
    assert _offenders(short, fresh) == [f"{label}: shape"]


def test_no_shipped_module_computes_attention_answers():
    import course_lib.checks.generation_loop as gl

    assert not hasattr(gl, "reference_attention")
    assert render(attention_data()).startswith('"""Stored expected outputs')
