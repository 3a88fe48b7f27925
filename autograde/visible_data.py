"""Expected values of visible checks that no shipped code may compute: written here, stored as data
in course_lib.

A visible check's expected value must come from stored data or from code that the student-installed
package does not ship, or ``course_lib`` would hand out a graded answer (issue 16:
``reference_attention`` solved 04's exercise 2a). This module keeps the float64 truth for
``attend_with_cache`` and writes its outputs into ``course_lib/checks/_attention_data.py``; ``python
-m autograde.visible_data`` rewrites that file and ``autograde/tests/test_visible_data.py`` proves
the stored values equal a fresh computation.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import torch

DATA_FILE = Path(__file__).resolve().parents[1] / "course_lib" / "checks" / "_attention_data.py"


def attention_truth(q, k_new, v_new, k_cache, v_cache) -> torch.Tensor:
    """Attention over cache + new keys written out in float64 (GQA by head index, causal with an
    offset)."""
    k = torch.cat([k_cache, k_new], dim=2).double()  # (B, nkv, S, hd)
    v = torch.cat([v_cache, v_new], dim=2).double()
    _, nh, T, hd = q.shape
    nkv, S = k.shape[1], k.shape[2]
    # query head -> its KV head
    head_of = torch.arange(nh) // (nh // nkv)
    k, v = k[:, head_of], v[:, head_of]  # (B, nh, S, hd)
    scores = q.double() @ k.transpose(-2, -1) / math.sqrt(hd)  # (B, nh, T, S)
    past = S - T
    allowed = torch.arange(S)[None, :] <= (past + torch.arange(T))[:, None]  # (T, S)
    y = scores.masked_fill(~allowed, -math.inf).softmax(-1) @ v  # (B, nh, T, hd)
    return y.to(q.dtype)


def attention_data() -> dict[str, dict]:
    """{case label: {"shape": [...], "y": [values in the case's dtype]}} for every visible
    attend_with_cache case."""
    from course_lib.checks.generation_loop import ATTENTION_SPEC, attention_inputs

    out = {}
    for label, seed, B, nh, nkv, T, past, hd, dtype in ATTENTION_SPEC:
        y = attention_truth(*attention_inputs(seed, B, nh, nkv, T, past, hd, dtype=dtype))
        out[label] = {"shape": list(y.shape), "y": [float(v) for v in y.reshape(-1).tolist()]}
    return out


def render(data: dict) -> str:
    """The text of ``_attention_data.py``."""
    return (
        '"""Stored expected outputs y of the visible attend_with_cache cases (values of a float64\n'
        "computation, rounded to each case's dtype). Written by `python -m "
        "autograde.visible_data`; do not edit\n"
        'by hand."""\n\n'
        f"DATA = {json.dumps(data, indent=None, separators=(',', ':'))}\n"
    )


if __name__ == "__main__":
    DATA_FILE.write_text(render(attention_data()))
    print("wrote", DATA_FILE)
