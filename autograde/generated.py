"""Generated hidden cases: inputs Hypothesis draws from what an exercise's text allows, drawn once
and stored.

A hidden module lists ``GENERATED = {check name: (strategy factory, count)}``; a strategy draws one
call's ``(args, kwargs)``. ``python -m autograde release`` draws them (a fixed seed per check,
duplicates dropped) only when ``autograde/generated/<assignment>.json`` lacks the check or its count
changed, and stores the inputs there (tagged JSON); their expected values are the reference
solution's outputs, stored with the other references. Grading reads the stored inputs and never
imports Hypothesis, so a new Hypothesis version cannot change what is graded, and an unchanged
release rewrites nothing.

Why Hypothesis: its draws favour the boundaries people forget (empty lists, one element, the
smallest and largest values allowed, repeated values), which seeded ``torch.randn`` cases rarely
reach.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any, Callable, TypedDict

from autograde.inside.codec import decode, encode
from course_lib.checks.engine import Case

FORMAT = 1
FOLDER = Path(__file__).resolve().parent / "generated"


class StoredCheck(TypedDict):
    count: int
    calls: list[Any]  # each call's [args, kwargs] as autograde.inside.codec's tagged JSON


class Stored(TypedDict):
    """One assignment's file: check name -> its stored draws."""

    format: int
    checks: dict[str, StoredCheck]


def _path(assignment: str, folder: Path | None = None) -> Path:
    return (folder or FOLDER) / f"{assignment}.json"


@functools.lru_cache(maxsize=None)
def _stored(path: str) -> Stored:
    p = Path(path)
    return json.loads(p.read_text()) if p.exists() else {"format": FORMAT, "checks": {}}


def cases(assignment: str, check: str, folder: Path | None = None) -> list[Case]:
    """The stored generated cases of ``check`` (none before the first release that draws them)."""
    checks = _stored(str(_path(assignment, folder)))["checks"]
    entries = checks[check].get("calls", []) if check in checks else []
    out = []
    for i, entry in enumerate(entries):
        args, kwargs = decode(entry)
        out.append(
            Case(tuple(args), dict(kwargs), label=f"generated {i + 1}: {_summary(args, kwargs)}")
        )
    return out


def _summary(args, kwargs) -> str:
    def one(x: Any) -> str:
        if hasattr(x, "shape") and hasattr(x, "dtype"):
            return f"{str(x.dtype).replace('torch.', '')} {list(x.shape)}"
        text = repr(x)
        return text if len(text) <= 40 else text[:37] + "..."

    parts = [one(a) for a in args] + [f"{k}={one(v)}" for k, v in kwargs.items()]
    return ", ".join(parts)


def draw(strategy, count: int, seed: int) -> list[tuple[tuple, dict]]:
    """``count`` distinct ``(args, kwargs)`` drawn by ``strategy`` with a fixed seed (Hypothesis at
    release only)."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as fixed_seed

    seen: set[str] = set()
    out: list[tuple[tuple, dict]] = []

    @fixed_seed(seed)
    @settings(
        max_examples=count * 4,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(call):
        key = json.dumps(encode(call), sort_keys=True)
        if key not in seen and len(out) < count:
            seen.add(key)
            out.append(call)

    collect()
    return out


def _seed(check: str) -> int:
    return int(hashlib.sha256(check.encode()).hexdigest()[:8], 16)


def generate(
    assignment: str,
    specs: dict[str, tuple[Callable[[], Any], int]],
    folder: Path | None = None,
    force: bool = False,
) -> bool:
    """Draw and store the calls of every check in ``specs`` that has none stored (or another count);
    True if the file changed."""
    path = _path(assignment, folder)
    data: Stored = (
        json.loads(path.read_text()) if path.exists() else {"format": FORMAT, "checks": {}}
    )
    changed = False
    for check, (factory, count) in sorted(specs.items()):
        have = data["checks"].get(check)
        if have is not None and have.get("count") == count and not force:
            continue
        calls = draw(factory(), count, _seed(check))
        data["checks"][check] = {"count": count, "calls": [encode(list(c)) for c in calls]}
        changed = True
    for check in sorted(set(data["checks"]) - set(specs)):
        del data["checks"][check]
        changed = True
    if changed:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        _stored.cache_clear()
    return changed
