"""The tagged codec: how values, check inputs and outcomes cross the trust boundary, as JSON (never
pickle).

Both sides use it: the grader encodes each check's inputs (``encode_cases``: no expected values) and
decodes the outcomes (``outcome_from_json``, through autograde.boundary.decode_outcomes, with its
caps); the verification's answers' process decodes the inputs and encodes what the student's
function returned (autograde.inside.relay.run_encoded). The grader also stores the hidden checks'
expected values with it (autograde/references/, autograde.references). Moved out of
course_lib.checks.engine (issue 36): the student's kernel never needs it. With ``wire`` and
``cells``, a module of autograde.inside that the trusted side imports
(autograde/tests/test_layout.py): it runs no student code.

Codec: finite floats are JSON numbers; tensors, arrays, tuples, sets, bytes, non-finite floats and
the placeholders ``Resource``/``Generator`` (course_lib.checks.engine) are one-key objects whose key
starts with "$".
"""

from __future__ import annotations

import base64
import functools
import json
import math
import sys
from typing import Any, Sequence

from course_lib.checks.engine import Case, Generator, Outcome, Resource

# ------------------------------------------------------------------------------------------ tagged
# codec JSON only: finite floats are JSON numbers (repr round-trips exactly); everything else is a
# one-key object whose key starts with "$". Plain dicts with str keys not starting with "$" stay
# plain objects.
_NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _torch():
    return sys.modules.get("torch")


def _float_out(x: float) -> Any:
    if math.isfinite(x):
        return x
    return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")


def _flat_out(values: list) -> list:
    return [_float_out(v) if type(v) is float else v for v in values]


def _flat_in(values: list) -> list:
    return [_NONFINITE[v] if isinstance(v, str) else v for v in values]


def encode(x: Any) -> Any:
    """Encode a value as JSON-compatible data; raises TypeError for anything not in the tagged
    codec."""
    t = type(x)
    if x is None or t is bool or t is int or t is str:
        return x
    if t is float:
        return x if math.isfinite(x) else {"$float": _float_out(x)}
    if t is list:
        return [encode(v) for v in x]
    if t is tuple:
        return {"$tuple": [encode(v) for v in x]}
    if t is dict:
        if all(type(k) is str and not k.startswith("$") for k in x):
            return {k: encode(v) for k, v in x.items()}
        return {"$dict": [[encode(k), encode(v)] for k, v in x.items()]}
    if t is set or t is frozenset:
        items = [encode(v) for v in x]
        return {"$set": sorted(items, key=lambda e: json.dumps(e, sort_keys=True))}
    if t is bytes:
        return {"$bytes": base64.b64encode(x).decode()}
    if t is Resource:
        return {"$resource": x.name}
    if t is Generator:
        return {"$generator": int(x.seed)}
    torch = _torch()
    if torch is not None and isinstance(x, torch.Tensor):
        if x.is_complex() or x.layout != torch.strided:
            raise TypeError(f"unsupported tensor (dtype {x.dtype}, layout {x.layout})")
        if x.device.type == "meta":  # no data: shape and dtype are all a meta tensor has
            return {"$meta": {"dtype": str(x.dtype).removeprefix("torch."), "shape": list(x.shape)}}
        flat = x.detach().to("cpu").reshape(-1)
        if flat.dtype in (torch.bfloat16, torch.float16):
            flat = flat.float()
        return {
            "$tensor": {
                "dtype": str(x.dtype).removeprefix("torch."),
                "shape": list(x.shape),
                "data": _flat_out(flat.tolist()),
            }
        }
    np = sys.modules.get("numpy")
    if np is not None:
        if t is np.ndarray:
            if x.dtype.kind not in "biuf":
                raise TypeError(f"unsupported numpy dtype {x.dtype}")
            return {
                "$ndarray": {
                    "dtype": x.dtype.name,
                    "shape": list(x.shape),
                    "data": _flat_out(x.reshape(-1).tolist()),
                }
            }
        if isinstance(x, np.generic) and x.dtype.kind in "biuf":
            return {
                "$npscalar": {
                    "dtype": x.dtype.name,
                    "value": _float_out(x.item()) if x.dtype.kind == "f" else x.item(),
                }
            }
    raise TypeError(f"values of type {t.__module__}.{t.__qualname__} are not supported")


@functools.lru_cache(maxsize=1)
def _torch_dtypes() -> dict:
    """torch's dtypes by name (float32, bfloat16, ...), made once: decoding looks one up per
    tensor."""
    import torch

    return {
        str(t).removeprefix("torch."): t for t in vars(torch).values() if isinstance(t, torch.dtype)
    }


def _torch_dtype(name: object):
    """torch's dtype of that name, looked up in torch's own dtypes: a name from a sandbox is never
    handed to getattr(torch, ...), which imports a lazy submodule of any name (white-box red team
    21: torch._dynamo)."""
    if not isinstance(name, str) or name not in _torch_dtypes():
        raise ValueError("unknown dtype")
    return _torch_dtypes()[name]


def decode(j: Any) -> Any:
    """Inverse of ``encode``; raises ValueError on anything that ``encode`` cannot have produced."""
    t = type(j)
    if j is None or t in (bool, int, str, float):
        return j
    if t is list:
        return [decode(v) for v in j]
    if t is not dict:
        raise ValueError(f"unexpected JSON value of type {t.__name__}")
    if len(j) == 1:
        ((k, v),) = j.items()
        if k.startswith("$"):
            return _decode_tagged(k, v)
    if any(k.startswith("$") for k in j):
        raise ValueError("malformed tagged value")
    return {k: decode(v) for k, v in j.items()}


def _decode_tagged(tag: str, v: Any) -> Any:
    if tag == "$float":
        return _NONFINITE[v]
    if tag == "$tuple":
        return tuple(decode(e) for e in v)
    if tag == "$dict":
        keys = _flood_free([_hashable(decode(k)) for k, _ in v])
        return dict(zip(keys, (decode(e) for _, e in v)))
    if tag == "$set":
        return set(_flood_free([_hashable(decode(e)) for e in v]))
    if tag == "$bytes":
        return base64.b64decode(v)
    if tag == "$resource":
        return Resource(str(v))
    if tag == "$generator":
        return Generator(int(v))
    if tag == "$meta":
        import torch

        return torch.empty(
            tuple(int(s) for s in v["shape"]), dtype=_torch_dtype(v["dtype"]), device="meta"
        )
    if tag in ("$tensor", "$ndarray"):
        shape, data, dtype = tuple(int(s) for s in v["shape"]), _flat_in(v["data"]), str(v["dtype"])
        if math.prod(shape) != len(data):
            raise ValueError("tensor data does not match its shape")
        if tag == "$tensor":
            import torch

            return torch.tensor(data, dtype=_torch_dtype(dtype)).reshape(shape)
        import numpy as np

        return np.array(data, dtype=np.dtype(dtype)).reshape(shape)
    if tag == "$npscalar":
        import numpy as np

        val = v["value"]
        return np.dtype(v["dtype"]).type(_NONFINITE[val] if isinstance(val, str) else val)
    raise ValueError(f"unknown tag {tag}")


# distinct numbers sharing a hash allowed in one decoded value; honest results have ~none
HASH_SHARED_MAX = 64


def _flood_free(values: Any) -> Any:
    """``values`` unchanged, unless more than HASH_SHARED_MAX distinct numbers, tuples or frozensets
    in it share a hash (ValueError).

    Python's hash of an int is fixed (every multiple of 2**61 - 1 hashes to 0), and a tuple's or a
    frozenset's is computed from its items' (white-box red team 22, C2: tuples of colliding ints): a
    set, a dict or a comparator's ``set(...)`` over n such values built to collide costs O(n^2), and
    a white-box red team's million-element result hung the trusted grader. Counting hashes in a dict
    keyed by the hash itself is linear (distinct hashes); strings' and bytes' hashes are salted per
    process, so no submission can make them collide."""
    first: dict[int, Any] = {}
    shared, stack = 0, [values]
    while stack:
        x = stack.pop()
        if isinstance(x, (list, set)):
            stack.extend(x)
            continue
        if isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
            continue
        if isinstance(x, (tuple, frozenset)):
            stack.extend(x)
        elif not (isinstance(x, (int, float)) or type(x).__module__ == "numpy"):
            continue
        try:
            h = hash(x)
        except TypeError:  # a tuple holding a list: no set or dict can hold it
            continue
        seen = first.setdefault(h, x)
        if seen is not x and seen != x:
            shared += 1
            if shared > HASH_SHARED_MAX:
                raise ValueError(
                    "the result holds many distinct values that share one hash (built to make "
                    "comparing them slow): not compared"
                )
    return values


def _hashable(x: Any) -> Any:
    if isinstance(x, (list, dict, set)):
        raise ValueError("unhashable key in encoded dict/set")
    return x


def dumps(x: Any) -> str:
    """``encode`` then a strict ``json.dumps`` (no NaN literals), stable key order."""
    return json.dumps(encode(x), allow_nan=False)


def loads(s: str) -> Any:
    """Strict ``json.loads`` (rejects NaN/Infinity literals) then ``decode``."""

    def reject(c: str) -> None:
        raise ValueError(f"non-standard JSON constant {c}")

    return decode(json.loads(s, parse_constant=reject))


def outcome_to_json(outcome: Outcome) -> dict:
    """An Outcome encoded for crossing a process boundary (never pickle)."""
    d = {
        "label": outcome.label,
        "error": outcome.error,
        "mutated": outcome.mutated,
        "seconds": outcome.seconds,
        "raised": outcome.raised,
        "aliased": outcome.aliased,
        "global_rng": outcome.global_rng,
        "forbidden": outcome.forbidden,
        "steps": outcome.steps,
        "generator_moved": outcome.generator_moved,
    }
    if outcome.error is None:
        try:
            d["value"] = encode(outcome.value)
        except TypeError as e:
            d["error"] = f"your function returned something that cannot be checked: {e}"
    return d


def outcome_from_json(d: dict) -> Outcome:
    """Inverse of ``outcome_to_json``; raises ValueError on malformed input."""
    if not isinstance(d, dict) or not isinstance(d.get("label"), str):
        raise ValueError("malformed outcome")
    err = d.get("error")
    mutated = d.get("mutated") or []
    raised = d.get("raised") or []
    aliased = d.get("aliased") or []
    global_rng = d.get("global_rng", False)
    forbidden = d.get("forbidden") or []
    steps = d.get("steps", -1)
    generator_moved = d.get("generator_moved", False)
    if type(steps) is not int or steps < -2:
        raise ValueError("malformed outcome")
    if (
        not (err is None or isinstance(err, str))
        or not all(isinstance(m, str) for m in mutated)
        or not isinstance(raised, list)
        or not all(isinstance(r, str) for r in raised)
        or not isinstance(aliased, list)
        or not all(isinstance(a, str) for a in aliased)
        or not isinstance(forbidden, list)
        or not all(isinstance(f, str) for f in forbidden)
        or type(global_rng) is not bool
        or type(generator_moved) is not bool
    ):
        raise ValueError("malformed outcome")
    value = _flood_free(decode(d["value"])) if err is None and "value" in d else None
    return Outcome(
        d["label"],
        value,
        err,
        list(mutated),
        float(d.get("seconds", 0.0)),
        list(raised),
        list(aliased),
        global_rng,
        list(forbidden),
        steps,
        generator_moved,
    )


def encode_cases(
    cases: Sequence[Case],
    allow_mutation: bool = False,
    forbidden: Sequence[str] = (),
    ops: Sequence[str] = (),
) -> str:
    """The JSON payload a fresh process needs to run student code on these cases (no expected
    values), with the routines to watch for while it runs (``course_lib.checks.trace``)."""
    return json.dumps(
        {
            "allow_mutation": allow_mutation,
            "forbidden": list(forbidden),
            "ops": list(ops),
            "cases": [
                {
                    "label": c.label,
                    "args": encode(tuple(c.args)),
                    "kwargs": encode(dict(c.kwargs)),
                    "repeat": c.repeat,
                    "fresh": c.fresh,
                    "count_steps": c.count_steps,
                    "no_draw": c.no_draw,
                }
                for c in cases
            ],
        },
        allow_nan=False,
    )
