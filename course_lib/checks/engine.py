"""Data-driven checks: the engine behind every notebook test cell.

A graded exercise is a function the student writes. Its tests are *data*: a `Check` names the
exercise, produces `Case`s (inputs + a label, optionally an independent expected value) and a
comparator that returns `None` (pass) or a message saying what is wrong. Because a check is data, it
runs in three places:

1. in the student's kernel: ``check("softmax", softmax)`` (visible checks,
``course_lib.checks.<topic>``)
   and ``hidden_check("softmax", softmax)`` (hidden checks, ``autograde.hidden.<topic>``);
2. in a fresh process that only runs student code: ``call_cases(fn, cases, ...)``, on inputs that
arrive as JSON
   (the grader's side of that: autograde/inside/, not shipped to students; no comparison, no
   references);
3. in the trusted grader: ``judge(check, outcomes, expected)`` compares decoded outcomes.

Example (a visible-check module, e.g. ``course_lib/checks/logits_softmax.py``)::

    from course_lib.checks.engine import Case, Check, allclose, exact

    ASSIGNMENT = "02_logits_softmax"         # which references file hidden checks of this topic
    read

    def _softmax_cases() -> list[Case]:
        return [Case(args=(torch.zeros(4),), label="uniform logits", expected=torch.full((4,),
        0.25)),
                Case(args=(torch.tensor([1000.0, 999.0]),), label="huge logits",
                     expected=torch.tensor([0.7310586, 0.2689414]))]

    CHECKS = [Check(name="softmax", exercise="softmax", cases=_softmax_cases,
                    compare=allclose(rtol=1e-5, atol=1e-6),
                    hint="exp(1000) overflows to inf: which shift of the logits keeps softmax
                    unchanged?")]

    # notebook test cell:
    from course_lib.checks import check
    check("softmax", softmax)        # prints "✓ softmax: 2/2 cases passed", or raises
    CheckFailed(message)

Hidden checks (``autograde/hidden/<topic>.py``) look the same but leave ``Case.expected`` unset: the
expected value of each case is the output of the reference solution (the function named
``Check.reference``, default ``Check.exercise``, defined in
``solutions/<ASSIGNMENT>/<ASSIGNMENT>.ipynb``), stored by ``python -m autograde release`` in
``autograde/references/<ASSIGNMENT>.json`` with the grader's codec (autograde.inside.codec).

Rules for check authors:
- ``cases()`` is deterministic (seed every random input) and cheap; a case's args/kwargs must be
encodable
  by the grader's codec (tensors, arrays, numbers incl. nan/inf, str, lists, tuples, dicts, sets) or
  be a placeholder: ``Resource("name")`` (e.g. the model, loaded by a loader registered with
  ``register_resource``) or ``Generator(seed)`` (a fresh seeded ``torch.Generator`` for each case).
- a comparator is ``compare(expected, got, case) -> str | None``; ``Case.compare`` overrides the
check's.
- statistical comparators state their false-fail probability (``multinomial_fit``: <= 1e-6 per
check)
  and depend only on the returned samples, never on how many random numbers the student's code drew.
- the student's function is called on deep copies of the inputs; mutating an input is a failure
unless
  ``Check.allow_mutation``.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import gc
import importlib
import math
import os
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence

__all__ = [
    "MISSING",
    "Case",
    "Check",
    "Contract",
    "CheckFailed",
    "CheckResult",
    "Outcome",
    "Registry",
    "Resource",
    "Generator",
    "allclose",
    "exact",
    "set_equal",
    "multinomial_fit",
    "run_cases",
    "call_cases",
    "judge",
    "evaluate",
    "register_resource",
    "rule_failures",
    "derived_cases",
    "HISTORY",
]

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING"})()
"""Sentinel: a case with no independent expected value (hidden checks read it from references)."""


# --------------------------------------------------------------------------------------------- data
# model
@dataclass(frozen=True)
class Resource:
    """Placeholder for a shared, non-serialisable argument (e.g. the model), resolved where the call
    runs."""

    name: str


@dataclass(frozen=True)
class Generator:
    """Placeholder for a fresh ``torch.Generator`` seeded with ``seed``, created once per case."""

    seed: int


class Comparator(Protocol):
    def __call__(self, expected: Any, got: Any, case: "Case") -> str | None: ...


@dataclass(frozen=True)
class Case:
    """One call of the student's function: ``fn(*args, **kwargs)``, called ``repeat`` times.

    With ``repeat > 1`` the outcome value is the list of the ``repeat`` return values (for
    samplers). With ``raises`` set (an exception class name, e.g. ``"ValueError"``) the case passes
    only when the function raises that exception or a subclass of it; such a case has no expected
    value.
    """

    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    label: str = ""
    expected: Any = MISSING
    compare: Comparator | None = None
    repeat: int = 1
    raises: str | None = None
    # with repeat > 1: fresh copies of the inputs (and fresh generators) for every call
    fresh: bool = False
    # count the Python lines the call executes (Contract.cost compares two cases)
    count_steps: bool = False
    # the text says no random number is drawn here: the Generator(seed) arguments must not move
    no_draw: bool = False


@dataclass(frozen=True)
class Contract:
    """What an exercise's text promises beyond its values, declared once per check and applied by
    the engine.

    Facts a contract needs are observed where the student's code runs (``_call``: which returned
    tensors share memory with an input or an earlier result, whether the global RNG moved) and
    returned in the ``Outcome``; the verdict is taken by ``judge`` from those facts, so it works the
    same in a notebook and in the sandbox-plus-trusted-judge split. Derived cases (below) are
    ordinary cases appended to ``Check.cases()``, so hidden checks store their reference outputs
    like any other case.
    """

    # no returned tensor is an input, a view of one, or memory shared between calls
    new_output: bool = True
    # derived case: the first plain case, called twice on fresh copies (and with a fresh generator
    # of the same seed): the same result both times
    twice: bool = True
    # cases with a Generator(seed) must draw only from it, never from the global RNG
    generator: bool = False
    # derived case: the first case with float32 tensors, given float64 ones instead
    float64: bool = False
    # derived case: the first case with tensors, on the `meta` device: the results must be on the
    # input's device (no tensor made on the CPU regardless)
    meta: bool = False
    # the text asks for a Python float: a tensor, even a 0-dim one, is not one
    number: bool = False
    # the text lets any float dtype come back: derived cases ask for a float dtype, not the
    # input's (04's attention: float64 results are allowed)
    any_float: bool = False
    # (small case label, large case label, max ratio): the cost the text states, as Python lines
    # executed (deterministic, unlike time) on two inputs that differ only in the size the cost
    # must not grow with
    cost: tuple = ()
    # ((case label, max lines), ...): absolute bounds on cases, far below what a loop over their
    # size runs: added work (a busy loop) cannot hide a loop from them, as it can from the ratio
    # above (bug zoo: repetition_penalty__padded_vocab_loop)
    cost_cap: tuple = ()


@dataclass(frozen=True)
class Check:
    """A named, data-driven test of one exercise (the student's function ``exercise``).

    ``cases()`` returns the cases the check's author wrote followed by those its ``contract``
    derives.
    """

    name: str
    exercise: str
    cases: Callable[[], list[Case]]
    compare: Comparator
    hint: str = ""
    # reference function in solutions/ (hidden checks); default exercise
    reference: str | None = None
    allow_mutation: bool = False  # True for exercises that are meant to work in place
    # default: Contract(), with new_output off when allow_mutation is set
    contract: Contract | None = None
    # calls the exercise's text forbids (``course_lib.checks.rules``)
    forbidden: tuple[str, ...] = ()
    # torch operators those calls run (``course_lib.checks.trace``)
    forbidden_ops: tuple[str, ...] = ()
    # other exercises the answer may call (the text's "you may call ..."): a failure names those
    # that fail their own check first (``check``)
    uses: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.forbidden and not self.forbidden_ops:
            from course_lib.checks.trace import ops_for

            object.__setattr__(self, "forbidden_ops", ops_for(self.forbidden))
        contract = self.contract
        if contract is None:
            contract = Contract(new_output=not self.allow_mutation, twice=not self.allow_mutation)
            object.__setattr__(self, "contract", contract)
        written = getattr(self.cases, "__wrapped_cases__", self.cases)

        def cases() -> list[Case]:
            base = list(written())
            return base + derived_cases(base, contract, self.compare)

        cases.__wrapped_cases__ = written
        object.__setattr__(self, "cases", cases)

    @property
    def reference_name(self) -> str:
        return self.reference or self.exercise


class CheckFailed(AssertionError):
    """Raised by a notebook test cell when a check fails; its message is written for the student."""


@dataclass
class Outcome:
    """What the student's function did on one case: a value, or an error message; inputs it
    mutated."""

    label: str
    value: Any = None
    error: str | None = None
    mutated: list[str] = field(default_factory=list)
    seconds: float = 0.0
    raised: list[str] = field(default_factory=list)  # class names of the raised exception's MRO
    # inputs (or "an earlier call") a result shares memory with
    aliased: list[str] = field(default_factory=list)
    global_rng: bool = False  # the call moved torch's global random state
    # forbidden routines that ran during the call (trace.Watch)
    forbidden: list[str] = field(default_factory=list)
    # Python lines the call executed (Case.count_steps); -1 not counted, -2 the counter was removed
    steps: int = -1
    # a Generator(seed) argument left the call in another state than its seed's
    generator_moved: bool = False


@dataclass
class CheckResult:
    """The verdict of one check: per-case failure messages (empty when passed) and a summary
    message."""

    name: str
    n_cases: int
    failures: list[tuple[str, str]]  # (case label, what is wrong)
    hint: str = ""

    @property
    def passed(self) -> bool:
        return not self.failures and self.n_cases > 0

    @property
    def message(self) -> str:
        if self.passed:
            return f"{self.name}: {self.n_cases}/{self.n_cases} cases passed"
        if self.n_cases == 0:
            return f"{self.name}: no cases were run"
        # rule failures ("do not use torch.softmax") are not cases: counting them as cases once read
        # "10 of 9"
        n_rules = sum(1 for label, _ in self.failures if label == "rules")
        # the check as a whole: every case counts as failed
        whole = any(label == "*" for label, _ in self.failures)
        n_bad = self.n_cases if whole else len(self.failures) - n_rules
        head = f"{self.name}: {n_bad} of {self.n_cases} cases failed" if n_bad else f"{self.name}:"
        if n_rules:
            head += (", and" if n_bad else "") + " the answer breaks a rule of the exercise"
        lines = [head]
        for label, msg in self.failures[:3]:
            what = (
                "  rule: "
                if label == "rules"
                else "  every case: "
                if label == "*"
                else f"  case {label!r}: "
            )
            lines.append(what + msg.replace("\n", "\n    "))
        if len(self.failures) > 3:
            lines.append(f"  ... and {len(self.failures) - 3} more")
        if self.hint:
            lines.append(f"Hint: {self.hint}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "passed": self.passed,
            "n_cases": self.n_cases,
            "failures": [list(f) for f in self.failures],
            "message": self.message,
        }


# ----------------------------------------------------------------------------------------------
# helpers
def _torch():
    return sys.modules.get("torch")


# -----------------------------------------------------------------------------------------
# comparators
def _kind(x: Any) -> str:
    torch = _torch()
    if torch is not None and isinstance(x, torch.Tensor):
        return "tensor"
    np = sys.modules.get("numpy")
    if np is not None and type(x) is np.ndarray:
        return "ndarray"
    if type(x) in (int, float) or (np is not None and isinstance(x, np.generic)):
        return "number"
    return type(x).__name__


def _describe(x: Any) -> str:
    k = _kind(x)
    if k == "tensor":
        return f"a torch.Tensor of shape {tuple(x.shape)} and dtype {x.dtype}"
    if k == "ndarray":
        return f"a numpy array of shape {x.shape} and dtype {x.dtype}"
    r = repr(x)
    return f"{type(x).__name__} {r[:80] + '...' if len(r) > 80 else r}"


def _as_f64(x: Any):
    import numpy as np

    if _kind(x) == "tensor":
        x = x.detach().to("cpu")
        if x.dtype in (_torch().bfloat16, _torch().float16):
            x = x.float()
        return x.numpy().astype(np.float64)
    return np.asarray(x, dtype=np.float64)


def _fmt(v: float) -> str:
    return f"{v:.6g}"


def _fmt2(e: float, g: float) -> tuple[str, str]:
    """Expected and got, with as many digits as it takes for two different numbers to print
    differently."""
    for digits in (6, 9, 12, 17):
        a, b = f"{e:.{digits}g}", f"{g:.{digits}g}"
        if a != b or e == g:
            return a, b
    return repr(float(e)), repr(float(g))


def _idx(i: tuple) -> str:
    return str(i[0]) if len(i) == 1 else str(tuple(int(a) for a in i))


@dataclass(frozen=True)
class allclose:
    """Numbers/arrays/tensors equal within ``|got - expected| <= atol + rtol * |expected|``.

    Checks the container kind (tensor vs numpy vs number), shape and (``check_dtype``) dtype first;
    nan in expected must be nan in got; reports nan/inf the student produced separately from plain
    mismatches. Lists, tuples and dicts are compared element-wise.
    """

    rtol: float = 1e-5
    atol: float = 1e-8
    check_dtype: bool = True

    def __call__(self, expected: Any, got: Any, case: Case | None = None) -> str | None:
        return self._cmp(expected, got, "")

    def _cmp(self, exp: Any, got: Any, where: str) -> str | None:
        at = f" at {where}" if where else ""
        ke, kg = _kind(exp), _kind(got)
        if ke in ("list", "tuple"):
            if type(got) is not type(exp):
                return f"expected a {ke}{at}, got {_describe(got)}"
            if len(got) != len(exp):
                return f"expected {len(exp)} items{at}, got {len(got)}"
            for i, (e, g) in enumerate(zip(exp, got)):
                if (m := self._cmp(e, g, f"{where}[{i}]")) is not None:
                    return m
            return None
        if ke == "dict":
            if type(got) is not dict:
                return f"expected a dict{at}, got {_describe(got)}"
            if set(got) != set(exp):
                return (
                    f"dict keys{at}: expected {sorted(map(str, exp))}, got {sorted(map(str, got))}"
                )
            for k in exp:
                if (m := self._cmp(exp[k], got[k], f"{where}[{k!r}]")) is not None:
                    return m
            return None
        if ke == "number":
            if kg == "tensor" and got.ndim == 0 or kg == "ndarray" and got.ndim == 0:
                got = got.item()
            elif kg != "number" or type(got) is bool:
                return f"expected a number{at}, got {_describe(got)}"
            return self._values(_as_f64(exp).reshape(1), _as_f64(got).reshape(1), at, scalar=True)
        if ke in ("tensor", "ndarray"):
            if kg != ke:
                want = "a torch.Tensor" if ke == "tensor" else "a numpy array"
                return f"expected {want}{at}, got {_describe(got)}"
            if tuple(got.shape) != tuple(exp.shape):
                return f"wrong shape{at}: expected {tuple(exp.shape)}, got {tuple(got.shape)}"
            if self.check_dtype and got.dtype != exp.dtype:
                return f"wrong dtype{at}: expected {exp.dtype}, got {got.dtype}"
            return self._values(_as_f64(exp), _as_f64(got), at, scalar=False)
        return exact()(exp, got)

    def _values(self, e, g, at: str, scalar: bool) -> str | None:
        import numpy as np

        bad_nonfinite = ~np.isfinite(g) & ~(np.isnan(e) & np.isnan(g)) & ~(np.isinf(e) & (e == g))
        if bad_nonfinite.any():
            i = tuple(np.argwhere(bad_nonfinite)[0])
            where = "" if scalar else f" at index {_idx(i)}"
            n = int(bad_nonfinite.sum())
            tail = "" if scalar else f" ({n} of {g.size} values are nan/inf)"
            return (
                f"got {_fmt(g[i])}{where}{at}, expected {_fmt(e[i])}{tail}; "
                "look for an overflow (exp of a large number), 0/0, or log(0)"
            )
        close = np.isclose(g, e, rtol=self.rtol, atol=self.atol, equal_nan=True)
        if close.all():
            return None
        with np.errstate(invalid="ignore"):  # inf - inf where both are inf of the same sign
            err = np.where(close, 0.0, np.abs(g - e))
        i = tuple(np.unravel_index(int(np.argmax(err)), err.shape))
        fe, fg = _fmt2(float(e[i]), float(g[i]))
        if scalar:
            return f"expected {fe}, got {fg}{at} (tolerance rtol={self.rtol}, atol={self.atol})"
        return (
            f"{int((~close).sum())} of {g.size} values differ{at}; worst at index {_idx(i)}: "
            f"expected {fe}, got {fg} (tolerance rtol={self.rtol}, atol={self.atol})"
        )


def _same(a: Any, b: Any) -> bool:
    ka, kb = _kind(a), _kind(b)
    if ka != kb:
        return False
    if ka == "tensor":
        torch = _torch()
        if a.device.type == "meta" or b.device.type == "meta":
            return a.device == b.device and a.dtype == b.dtype and a.shape == b.shape
        return (
            a.dtype == b.dtype
            and a.shape == b.shape
            and bool(
                torch.equal(a.cpu(), b.cpu())
                or torch.isnan(a).any()
                and torch.equal(a.nan_to_num(0), b.nan_to_num(0))
                and torch.equal(a.isnan(), b.isnan())
            )
        )
    if ka == "ndarray":
        import numpy as np

        return (
            a.dtype == b.dtype
            and a.shape == b.shape
            and bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
        )
    if ka == "number" or type(a) is not type(b):
        return type(a) is type(b) and (a == b or (a != a and b != b))
    if ka in ("list", "tuple"):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if ka == "dict":
        return set(a) == set(b) and all(_same(a[k], b[k]) for k in a)
    return bool(a == b)


def _same_up_to_rounding(a: Any, b: Any) -> bool:
    """_same, except that floating-point values may differ by rounding (float64 1e-9, float32 1e-5,
    half 1e-2 relative): the same computation in a multi-threaded BLAS sums in another order from
    one call to the next."""
    if _same(a, b):
        return True
    ka, kb = _kind(a), _kind(b)
    if ka != kb:
        return False
    if ka == "number":
        return (
            isinstance(a, float)
            and isinstance(b, float)
            and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-300)
        )
    if ka == "tensor":
        torch = _torch()
        if not (
            a.is_floating_point()
            and a.dtype == b.dtype
            and a.shape == b.shape
            and a.device == b.device
            and a.device.type != "meta"
        ):
            return False
        rtol = {torch.float64: 1e-9, torch.float32: 1e-5}.get(a.dtype, 1e-2)
        return bool(
            torch.allclose(a.double().cpu(), b.double().cpu(), rtol=rtol, atol=0.0, equal_nan=True)
        )
    if ka in ("list", "tuple"):
        return len(a) == len(b) and all(_same_up_to_rounding(x, y) for x, y in zip(a, b))
    if ka == "dict":
        return set(a) == set(b) and all(_same_up_to_rounding(a[k], b[k]) for k in a)
    return False


@dataclass(frozen=True)
class exact:
    """Exactly equal, same type (ints, strings, token-id lists, integer tensors, ...)."""

    def __call__(self, expected: Any, got: Any, case: Case | None = None) -> str | None:
        if _same(expected, got):
            return None
        if _kind(expected) != _kind(got):
            return f"expected {_describe(expected)}, got {_describe(got)}"
        if _kind(expected) in ("tensor", "ndarray") and tuple(expected.shape) != tuple(got.shape):
            return f"wrong shape: expected {tuple(expected.shape)}, got {tuple(got.shape)}"
        if _kind(expected) in ("tensor", "ndarray") and expected.dtype != got.dtype:
            return f"wrong dtype: expected {expected.dtype}, got {got.dtype}"
        if isinstance(expected, (list, tuple)) and isinstance(got, (list, tuple)):
            if len(expected) != len(got):
                return (
                    f"expected {len(expected)} items, got {len(got)}: expected "
                    f"{_short(expected)}, got {_short(got)}"
                )
            i = next(i for i, (a, b) in enumerate(zip(expected, got)) if not _same(a, b))
            return (
                f"first difference at position {i}: expected {_short(expected[i])}, got "
                f"{_short(got[i])}"
            )
        return f"expected {_short(expected)}, got {_short(got)}"


def _short(x: Any) -> str:
    r = repr(x)
    return r if len(r) <= 120 else r[:117] + "..."


def _to_list(x: Any) -> list | None:
    k = _kind(x)
    if k in ("tensor", "ndarray"):
        return x.reshape(-1).tolist()
    if isinstance(x, (list, tuple, set, frozenset)):
        return list(x)
    return None


@dataclass(frozen=True)
class set_equal:
    """Same elements in any order (e.g. the indices kept by top-k); duplicates in ``got`` are an
    error."""

    def __call__(self, expected: Any, got: Any, case: Case | None = None) -> str | None:
        e, g = _to_list(expected), _to_list(got)
        if g is None:
            return f"expected a collection, got {_describe(got)}"
        if len(set(g)) != len(g):
            return f"got duplicate elements: {_short(sorted(g))}"
        if set(e) == set(g):
            return None
        missing, extra = sorted(set(e) - set(g)), sorted(set(g) - set(e))
        return f"missing {_short(missing)}, unexpected {_short(extra)}"


def _kl(q: float, p: float) -> float:
    """KL(Bernoulli(q) || Bernoulli(p)), for the Chernoff bound."""
    out = 0.0
    if q > 0:
        out += q * math.log(q / p)
    if q < 1:
        out += (1 - q) * math.log((1 - q) / (1 - p))
    return out


@dataclass(frozen=True)
class multinomial_fit:
    """Samples (token ids) drawn from the expected probability vector, within a Chernoff bound.

    ``expected`` is a probability vector over ids 0..V-1; ``got`` is a 1-D sequence of sampled ids
    (or, with ``Case.repeat``, a list of single ids / 1-element tensors). Fails if an id has
    probability 0, or if for any id the count c out of n satisfies n * KL(c/n || p) > log(2V /
    false_fail). By the Chernoff bound each tail has probability <= false_fail / (2V), so a correct
    sampler fails with probability <= false_fail (union bound over 2V tails), whatever random
    numbers it draws and however many.
    """

    false_fail: float = 1e-6

    def __call__(self, expected: Any, got: Any, case: Case | None = None) -> str | None:
        p = _as_f64(expected).reshape(-1).tolist()
        flat: list = []
        for v in got if isinstance(got, list) else [got]:
            vals = _to_list(v)
            flat.extend(vals if vals is not None else [v])
        if not flat:
            return "got no samples"
        if not all(
            type(v) is int or (_kind(v) == "number" and float(v).is_integer()) for v in flat
        ):
            return f"expected integer token ids, got {_short(flat[:5])}"
        ids = [int(v) for v in flat]
        V, n = len(p), len(ids)
        out = [i for i in ids if not 0 <= i < V]
        if out:
            return f"sampled id {out[0]} is out of range 0..{V - 1}"
        counts = [0] * V
        for i in ids:
            counts[i] += 1
        zero = [i for i in range(V) if p[i] == 0 and counts[i] > 0]
        if zero:
            return f"sampled id {zero[0]} {counts[zero[0]]} times, but its probability is 0"
        limit = math.log(2 * V / self.false_fail)
        worst = max(range(V), key=lambda i: n * _kl(counts[i] / n, p[i]) if p[i] > 0 else 0.0)
        if p[worst] > 0 and n * _kl(counts[worst] / n, p[worst]) > limit:
            return (
                f"id {worst} was sampled {counts[worst]} times out of {n} "
                f"(frequency {counts[worst] / n:.4f}), but its probability is {p[worst]:.4f}; "
                f"a correct sampler fails this check with probability < {self.false_fail:g}"
            )
        return None


# ------------------------------------------------------------------------------------
# contract-derived cases
def _map_tensors(x: Any, f: Callable, depth: int = 0) -> Any:
    torch = _torch()
    if torch is not None and isinstance(x, torch.Tensor):
        return f(x)
    if depth < 4 and type(x) in (list, tuple):
        return type(x)(_map_tensors(v, f, depth + 1) for v in x)
    if depth < 4 and type(x) is dict:
        return {k: _map_tensors(v, f, depth + 1) for k, v in x.items()}
    return x


def _twice(cmp: Comparator, base: Case) -> Comparator:
    """Comparator of a case called twice on fresh copies: same result both times, then the base
    comparison."""

    def compare(expected: Any, got: Any, case: Case) -> str | None:
        if not isinstance(got, list) or len(got) != 2:
            return "internal error: a twice-called case must give two results"
        if not _same_up_to_rounding(got[0], got[1]):
            seed = (
                " and a new generator with the same seed"
                if _has_generator(base.args) or _has_generator(base.kwargs)
                else ""
            )
            return (
                f"called twice with the same inputs{seed}, your function returned different "
                "results: "
                f"first {_short(got[0])}, then {_short(got[1])}"
            )
        return cmp(expected[0], got[0], base)

    return compare


def _meta_cannot_run(error: str) -> bool:
    """Whether an error on ``meta`` inputs says nothing about devices: an operator that cannot run
    there (nonzero, unique, .item(), a copy to numpy), or Python work on the zeros a copy to the CPU
    gives there (a division by a count of 0), not a tensor made on another device ("Tensor on device
    cpu is not on the expected device meta"): the meta case is then inconclusive, and an honest
    answer keeps its point. The meta case is about devices only; its plain twin (the first case)
    judges the values."""
    low = error.lower()
    return not any(
        p in low for p in ("expected device", "same device", "two devices", "different device")
    )


def _on_meta(
    expected: Any, got: Any, case: Case | None = None, where: str = "", any_float: bool = False
) -> str | None:
    """Results of a call on ``meta`` tensors: meta tensors of the expected shape and dtype (with
    ``any_float``, a float dtype where a float one is expected); other values equal."""
    torch = _torch()
    if torch is not None and isinstance(expected, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            return f"expected a torch.Tensor{where}, got {_describe(got)}"
        if got.device.type != "meta":
            return (
                "given inputs on the `meta` device, your function returned a tensor on "
                f"{got.device}{where}: "
                "make new tensors on the input's device (device=x.device, torch.zeros_like(x), "
                "x.new_full(...))"
            )
        dtype_ok = got.dtype == expected.dtype or (
            any_float and expected.is_floating_point() and got.is_floating_point()
        )
        if tuple(got.shape) != tuple(expected.shape) or not dtype_ok:
            wanted = (
                "a float dtype" if any_float and expected.is_floating_point() else expected.dtype
            )
            return (
                f"expected shape {tuple(expected.shape)} and dtype {wanted}{where}, "
                f"got shape {tuple(got.shape)} and dtype {got.dtype}"
            )
        return None
    if (
        type(expected) in (list, tuple)
        and type(got) is type(expected)
        and len(got) == len(expected)
    ):
        for i, (e, g) in enumerate(zip(expected, got)):
            if (m := _on_meta(e, g, case, f"{where}[{i}]", any_float)) is not None:
                return m
        return None
    return (
        None if _same(expected, got) else f"expected {_short(expected)}{where}, got {_short(got)}"
    )


def _on_meta_any_float(expected: Any, got: Any, case: Case | None = None) -> str | None:
    """``_on_meta`` for a check whose text lets any float dtype come back."""
    return _on_meta(expected, got, case, any_float=True)


_META_COMPARES = (_on_meta, _on_meta_any_float)


def derived_cases(base: list[Case], contract: Contract, compare: Comparator) -> list[Case]:
    """The cases a contract adds to the written ones (see ``Contract``); empty when nothing
    applies."""
    torch = _torch()
    out: list[Case] = []
    plain = [c for c in base if c.raises is None and c.repeat == 1 and not c.fresh]
    if contract.twice and plain:
        c = plain[0]
        out.append(
            Case(
                args=c.args,
                kwargs=c.kwargs,
                label=f"{c.label} [called twice]",
                repeat=2,
                fresh=True,
                expected=MISSING if c.expected is MISSING else [c.expected, c.expected],
                compare=_twice(c.compare or compare, c),
            )
        )
    if torch is None:
        return out
    if contract.float64:

        def f64(t):
            return t.double() if t.dtype == torch.float32 else t

        c = next(
            (
                c
                for c in plain
                if any(t.dtype == torch.float32 for t in _tensors([c.args, c.kwargs]))
            ),
            None,
        )
        if c is not None:
            out.append(
                Case(
                    args=_map_tensors(c.args, f64),
                    kwargs=_map_tensors(c.kwargs, f64),
                    label=f"{c.label} [float64 inputs]",
                    compare=c.compare,
                    expected=c.expected if c.expected is MISSING else _map_tensors(c.expected, f64),
                )
            )
    if contract.meta:

        def meta(t):
            return t.to("meta")

        c = next((c for c in plain if _tensors([c.args, c.kwargs])), None)
        if c is not None:
            out.append(
                Case(
                    args=_map_tensors(c.args, meta),
                    kwargs=_map_tensors(c.kwargs, meta),
                    label=f"{c.label} [inputs on the meta device]",
                    compare=_on_meta_any_float if contract.any_float else _on_meta,
                    expected=c.expected
                    if c.expected is MISSING
                    else _map_tensors(c.expected, meta),
                )
            )
    return out


# ----------------------------------------------------------------------------------- running
# student code
_RESOURCE_LOADERS: dict[str, Callable[[], Any]] = {}
_RESOURCE_CACHE: dict[str, Any] = {}


def raises_case(exc: str, *args, label: str, **kwargs) -> list[Case]:
    """A one-case list expecting the student's function, called with args and kwargs, to raise
    ``exc``."""
    return [Case(args=args, kwargs=kwargs, label=label, raises=exc)]


def register_resource(name: str, loader: Callable[[], Any]) -> None:
    """Make ``Resource(name)`` resolvable; the loader runs at most once per process."""
    _RESOURCE_LOADERS[name] = loader


def _resolve(x: Any, fresh: dict) -> Any:
    if type(x) is Resource:
        if x.name not in _RESOURCE_CACHE:
            if x.name not in _RESOURCE_LOADERS:
                raise KeyError(f"no loader registered for resource {x.name!r}")
            _RESOURCE_CACHE[x.name] = _RESOURCE_LOADERS[x.name]()
        return _RESOURCE_CACHE[x.name]
    if type(x) is Generator:
        if x not in fresh:
            import torch

            fresh[x] = torch.Generator().manual_seed(x.seed)
        return fresh[x]
    if type(x) in (list, tuple):
        return type(x)(_resolve(v, fresh) for v in x)
    if type(x) is dict:
        return {k: _resolve(v, fresh) for k, v in x.items()}
    return x


def _is_placeholder(x: Any) -> bool:
    return type(x) in (Resource, Generator)


def _has_generator(x: Any, depth: int = 0) -> bool:
    if type(x) is Generator:
        return True
    if depth < 4 and type(x) in (list, tuple):
        return any(_has_generator(v, depth + 1) for v in x)
    if depth < 4 and type(x) is dict:
        return any(_has_generator(v, depth + 1) for v in x.values())
    return False


def _student_frame(tb) -> str:
    """The innermost traceback line in the student's code (not this engine, not an installed
    library)."""
    frames = traceback.extract_tb(tb)
    here, stdlib = os.path.abspath(__file__), os.path.dirname(os.__file__)
    chosen = None
    for fr in frames:
        fn = fr.filename if fr.filename.startswith("<") else os.path.abspath(fr.filename)
        if fn == here or "site-packages" in fn or fn.startswith(stdlib):
            continue
        chosen = fr
    if chosen is None:
        return ""
    code = (chosen.line or "").strip()
    where = f"\n  in {chosen.name}(), line {chosen.lineno}"
    return f"{where}: {code}" if code else where


def _tensors(x: Any, depth: int = 0) -> list:
    """The tensors inside a value (lists, tuples, dict values), for the aliasing contract."""
    torch = _torch()
    if torch is None or depth > 4:
        return []
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _tensors(v, depth + 1)]
    if isinstance(x, dict):
        return [t for v in x.values() for t in _tensors(v, depth + 1)]
    return []


def _storage(t) -> tuple[int, int] | None:
    """(start, end) address of the memory a tensor lives in; None when it has none (meta, empty)."""
    try:
        st = t.untyped_storage()
        ptr, n = st.data_ptr(), st.nbytes()
    except Exception:  # a tensor subclass without storage has nothing to alias
        return None
    return (ptr, ptr + n) if ptr and n else None


def _aliasing(
    values: list, args: Sequence, kwargs: dict, pristine_args: Sequence, pristine_kwargs: dict
) -> list[str]:
    """Which inputs (or earlier results of the same case) a returned tensor shares memory with."""
    inputs = [
        (f"argument {i + 1}", a)
        for i, (a, p) in enumerate(zip(args, pristine_args))
        if not _is_placeholder(p)
    ]
    inputs += [
        (f"argument {k}=", kwargs[k]) for k, p in pristine_kwargs.items() if not _is_placeholder(p)
    ]
    spans = [
        (name, sp) for name, a in inputs for t in _tensors(a) if (sp := _storage(t)) is not None
    ]
    out: list[str] = []
    earlier: list[tuple[int, int]] = []
    for v in values:
        mine = [sp for t in _tensors(v) if (sp := _storage(t)) is not None]
        for name, (a0, a1) in spans:
            if name not in out and any(b0 < a1 and a0 < b1 for b0, b1 in mine):
                out.append(name)
        if (
            any(b0 < a1 and a0 < b1 for b0, b1 in mine for a0, a1 in earlier)
            and "an earlier call" not in out
        ):
            out.append("an earlier call")
        earlier += mine
    return out


# Operators that take tensors on two devices on a GPU too: copies between devices, and indexing a
# GPU tensor with CPU indices (x[idx]). Everything else refuses a CPU tensor with dimensions beside
# a GPU one.
_CROSS_DEVICE_OK = frozenset(
    {
        "_to_copy",
        "copy_",
        "_copy_from",
        "_copy_from_and_resize",
        "lift_fresh",
        "lift_fresh_copy",
        "index",
        "index_put",
        "index_put_",
        "_index_put_impl_",
        "detach",
        "alias",
        "clone",
    }
)


def _meta_to_cpu(func: Any, args: tuple, kwargs: dict) -> bool:
    """Whether a dispatched call copies a `meta` tensor to the CPU (``x.cpu()``,
    ``x.to("cpu")``)."""
    torch = _torch()
    return (
        func.overloadpacket.__name__ == "_to_copy"
        and len(args) == 1
        and isinstance(args[0], torch.Tensor)
        and args[0].device.type == "meta"
        and torch.device(kwargs.get("device") or "meta").type == "cpu"
    )


@functools.lru_cache(maxsize=None)
def _same_device_mode_class() -> type:
    """A dispatch mode that makes the `meta` device as strict as a GPU: an operator given a meta
    tensor and a CPU tensor with dimensions raises, as CUDA does (`meta` kernels accept the mix, so
    a tensor made on the CPU where the text says "on the input's device" would go unseen on a
    machine without a GPU). CPU 0-dim tensors (scalars) are allowed beside any device, as on a
    GPU."""
    from course_lib.checks.trace import quiet_mode

    # torch imports ~800 modules (sympy among them) on the first operator given a meta tensor. Done
    # here, before the run-time watch is on, that takes ~1 s; under the watch's profile hook it took
    # 28 s of every grading of 04.
    torch = _torch()
    torch.cat([torch.empty(1, device="meta")] * 2)

    class SameDevice(quiet_mode()):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if _meta_to_cpu(func, args, kwargs):
                # A copy to the CPU works on a GPU; on `meta` it raised "no data", which made the
                # case say nothing, so a mask then built on the CPU from the copy went unseen (bug
                # zoo: repetition_penalty__mask_on_cpu). The copy is zeros of the right shape and
                # dtype: any later mix with the inputs' device still raises.
                return torch.zeros(
                    args[0].shape, dtype=kwargs.get("dtype") or args[0].dtype, device="cpu"
                )
            if func.overloadpacket.__name__ not in _CROSS_DEVICE_OK:
                ts = _tensors([args, kwargs])
                if any(t.device.type == "meta" for t in ts) and any(
                    t.device.type == "cpu" and t.dim() > 0 for t in ts
                ):
                    raise RuntimeError(
                        f"Expected all tensors to be on the same device, but found at least two "
                        f"devices, meta and cpu! ({func.overloadpacket.__name__}: a tensor made on "
                        "the CPU met the inputs' device; on a GPU this call fails the same way)"
                    )
            return func(*args, **kwargs)

    return SameDevice


# Results are copied, encoded and compared item by item: a 50-million-item list took one student's
# grading from 20 s to 420 s. The largest expected result is a few [B, 49152] rows.
MAX_RESULT_ITEMS = 4_000_000


def _oversized(x: Any, budget: int) -> bool:
    """Whether x holds more than `budget` items (tensor elements, container entries), counted
    without copying."""
    torch = _torch()
    stack, left = [x], budget
    while stack:
        v = stack.pop()
        if torch is not None and isinstance(v, torch.Tensor):
            left -= v.numel()
        elif isinstance(v, (list, tuple, set, frozenset, dict)):
            left -= len(v)
            if left >= 0:
                stack.extend(v.items() if isinstance(v, dict) else v)
        if left < 0:
            return True
    return False


def _write_counts(args: tuple, kwargs: dict) -> dict:
    """{argument position or keyword: torch's in-place write counters of its tensors}. An in-place
    write bumps a tensor's counter even when a later write puts the old values back, which comparing
    values cannot see."""
    out: dict = {}
    for key, v in [*enumerate(args), *kwargs.items()]:
        counts = []
        for t in _tensors(v):
            try:
                counts.append(t._version)
            # inference-mode tensors keep no counter (and cannot be written in place)
            except RuntimeError:
                counts.append(None)
        out[key] = tuple(counts)
    return out


def _generators_moved(fresh: dict) -> bool:
    """Whether a Generator(seed) placeholder's resolved generator is no longer in its seed's state
    (it drew)."""
    import torch

    return any(
        type(p) is Generator
        and not torch.equal(g.get_state(), torch.Generator().manual_seed(p.seed).get_state())
        for p, g in fresh.items()
    )


_PLAIN_TYPES = frozenset(
    {type(None), bool, int, float, complex, str, bytes, list, tuple, dict, set, frozenset}
)


def _numpy_plain_types() -> frozenset:
    """numpy's own array and scalar types (C types a cell cannot change), or none without numpy."""
    np = sys.modules.get("numpy")
    if np is None:
        return frozenset()
    return frozenset({np.ndarray, *(t for t in np.sctypeDict.values() if isinstance(t, type))})


# ids of the plain types (``_plain_ids``), made once numpy and torch are imported; kept in a dict,
# never rebound (the verification's seal reads a rebound module name as the checks changed)
_PLAIN_IDS: dict[str, frozenset[int]] = {}
_CONTAINER_IDS = frozenset(map(id, (list, tuple, set, frozenset, dict)))


def _plain_ids() -> frozenset[int]:
    """ids of the plain types: compared as ints, so no class's own ``__hash__``/``__eq__`` (a
    metaclass's) runs."""
    if "final" not in _PLAIN_IDS:
        torch = _torch()
        plain = set(_PLAIN_TYPES | _numpy_plain_types() | {Resource, Generator})
        if torch is not None:
            plain |= {
                torch.Tensor,
                torch.nn.Parameter,
                torch.dtype,
                torch.device,
                torch.Size,
                torch.Generator,
            }
        ids = frozenset(map(id, plain))
        if sys.modules.get("numpy") is None or torch is None:
            return ids  # not final yet: made again once both are imported
        _PLAIN_IDS["final"] = ids
    return _PLAIN_IDS["final"]


def _foreign_value(
    values: Any, skip: Callable[[Any], bool] = lambda v: False, budget: int = MAX_RESULT_ITEMS
) -> str | None:
    """What in ``values`` is not plain data, found by ``type()`` and ``id()`` alone (no method of
    any object runs, not even a metaclass's ``__hash__``), or None.
    Plain: None, numbers, strings, bytes, the built-in containers, torch.Tensor and nn.Parameter
    themselves, numpy's arrays and scalars, the course's placeholders. Any other object (a subclass
    of any of these included) can run code when it is next touched: by the engine or the codec after
    the call, where no watch or line counter is on (threat model, white-box red team 21, B10, and
    the protocols of returned objects: ``__iter__``, ``__len__``, ``__eq__``, ``item``). A
    container's items are typed by C code in one pass (a list of 49,152 floats costs no Python loop:
    white-box red team 23's rehearsal measured this walk at 39 % of selfcheck 03)."""
    plain, given = _plain_ids(), budget

    def foreign(v: Any) -> str:
        t = type(v)
        return (
            f"a {t.__module__}.{t.__qualname__}, which is not plain data (such an object can run "
            "code whenever it is used): use tensors, numbers, strings, lists, tuples or dicts"
        )

    stack = [values]
    while stack:
        v = stack.pop()
        if skip(v):
            continue
        budget -= 1
        if id(type(v)) not in plain:
            return foreign(v)
        t = type(v)
        if t is dict:
            items: Any = [*v.keys(), *v.values()]
        elif id(t) in _CONTAINER_IDS:
            items = v
        else:
            continue
        budget -= len(items)
        if budget <= 0:  # not walked to the end, so not known to be plain
            return f"more than {given:,} values, far more than any case expects: not compared"
        kinds = set(map(id, map(type, items)))  # ints: C code only
        if not kinds <= plain or kinds & _CONTAINER_IDS:
            stack.extend(
                x
                for x in items
                if id(type(x)) not in plain or id(type(x)) in _CONTAINER_IDS or skip(x)
            )
    return None


# torch's tensor classes as they were before any cell ran: a Python class takes new methods
# (``type(x).detach = f``), and the engine's own work after a call (copying, comparing, encoding the
# result) calls tensor methods where no watch or counter is on (threat model, white-box red team 22)
_PRISTINE_CLASSES: dict[type, dict[str, Any]] = {}


def _take_pristine_classes() -> None:
    torch = _torch()
    if torch is not None and not _PRISTINE_CLASSES:
        for cls in (torch.Tensor, torch.nn.Parameter):
            _PRISTINE_CLASSES[cls] = dict(vars(cls))


# what the standard library caches on a class the first time it copies an instance
# (copyreg._slotnames, run by copy.deepcopy): not a change anyone made
_LAZY_CLASS_CACHES = frozenset({"__slotnames__"})


# a class -> (names, ids of values) of a state found equal to the pristine one
_CHECKED: dict[type, tuple] = {}


def _restore_classes() -> list[str]:
    """The names changed on torch's tensor classes since the engine was imported, each put back as
    it was. A state already found unchanged is known again by its names and the ids of its values
    (the pristine dict keeps every old value alive, so an id is never reused): C code only, no
    per-name loop in the common case."""
    changed = []
    for cls, pristine in _PRISTINE_CLASSES.items():
        now = vars(cls)
        state = (tuple(now), tuple(map(id, now.values())))
        if _CHECKED.get(cls) == state:
            continue
        mine = [
            n
            for n in {*now, *pristine} - _LAZY_CLASS_CACHES
            if now.get(n, MISSING) is not pristine.get(n, MISSING)
        ]
        for name in mine:
            changed.append(f"{cls.__name__}.{name}")
            if name in pristine:
                setattr(cls, name, pristine[name])
            else:
                delattr(cls, name)
        now = vars(cls)
        _CHECKED[cls] = (tuple(now), tuple(map(id, now.values())))
    return changed


def _copied(values: Any) -> Any:
    """Plain data (already walked by ``_foreign_value``) rebuilt: containers anew, tensors as
    detached copies, so the outcome holds nothing the answer made or can still reach."""
    torch = _torch()
    t = type(values)
    if t is list or t is tuple:
        return t(_copied(v) for v in values)
    if t is dict:
        return {k: _copied(v) for k, v in values.items()}
    if torch is not None and isinstance(values, torch.Tensor):
        return values.detach().clone()
    np = sys.modules.get("numpy")
    if np is not None and t is np.ndarray:
        return values.copy()
    return values


def _message(e: BaseException) -> str:
    try:
        return str(e)
    except Exception as inner:  # the message is the student's code too
        return f"(its message raised {type(inner).__name__})"


class _Tail:
    """The end of a call, watched and counted like the call itself: what the answer made and the
    engine still holds (its inputs, its results, an exception and its frames) is let go here, and
    the cycles among it are collected here, so a finalizer (``__del__``, a generator's ``finally``,
    a weakref callback) that runs when they die runs under the rules (threat model, white-box red
    team 22, C1). The collector is off from the call to the tail, so no collection runs the answer's
    finalizers in between; objects older than the call are frozen, so the collection costs only what
    the call made."""

    def __init__(self, counter: "_StepCounter", watch: Any):
        self.counter, self.watch = counter, watch

    def __enter__(self) -> "_Tail":
        self.counter.resume()
        if self.watch is not None:
            self.watch.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        try:
            gc.collect()
        finally:
            if self.watch is not None:
                self.watch.__exit__(None, None, None)
            self.counter.pause()


def _call(
    fn: Callable,
    case: Case,
    allow_mutation: bool,
    watch: Any = None,
    report_steps: Callable[[str, int], None] | None = None,
) -> Outcome:
    """One case: the call, then the engine's observations of it, then the tail (``_Tail``)."""
    _take_pristine_classes()
    collecting = gc.isenabled()
    gc.freeze()
    gc.disable()
    counter = _StepCounter(case.count_steps, report_steps, case.label)
    held: list = []  # everything the answer handled, let go in the tail
    try:
        outcome = _observe(fn, case, allow_mutation, watch, counter, held)
        if outcome.error is None:
            outcome.value = _copied(outcome.value)
        with _Tail(counter, watch):
            if held and isinstance(held[-1], BaseException):
                caught = held.pop()
                outcome.error = (
                    f"your function raised {type(caught).__name__}: "
                    f"{_message(caught)}{outcome.error}"
                )
                caught.__traceback__ = None
                caught = None
            held.clear()
        outcome.steps = counter.steps
        if counter.collector and outcome.error is None:
            outcome.error = (
                "your function switched the garbage collector on while its lines were counted: "
                "work a finalizer does then is not counted"
            )
        if watch is not None and outcome.error is None:
            outcome.forbidden = sorted(watch.seen)
        return outcome
    finally:
        held.clear()
        gc.unfreeze()
        if collecting:
            gc.enable()


def _mutated(
    args: Sequence, kwargs: dict, pristine_args: Sequence, pristine_kwargs: dict, written: set
) -> list[str]:
    """The arguments a call changed: by value, or written in place and then restored."""
    out = []
    restored = ", written and then restored: the caller's tensor was still written"
    for i, (a, p) in enumerate(zip(args, pristine_args)):
        if not _is_placeholder(p) and not _same(a, p):
            out.append(f"argument {i + 1}")
        elif not _is_placeholder(p) and i in written:
            out.append(f"argument {i + 1}{restored}")
    for k, p in pristine_kwargs.items():
        if not _is_placeholder(p) and not _same(kwargs[k], p):
            out.append(f"argument {k}=")
        elif not _is_placeholder(p) and k in written:
            out.append(f"argument {k}={restored}")
    return out


def _observe(
    fn: Callable, case: Case, allow_mutation: bool, watch: Any, counter: "_StepCounter", held: list
) -> Outcome:
    """Call ``fn`` on the case (``case.repeat`` times) under the watch and counter, and observe what
    it did; puts what the answer handled into ``held``, and an exception it raised last (its message
    is made in the tail)."""
    fresh: dict = {}
    pristine_args, pristine_kwargs = case.args, case.kwargs
    values: list = []
    t0 = time.perf_counter()
    mutated: list[str] = []
    # arguments (position or keyword) whose tensors an in-place operation wrote to
    written: set = set()
    generator_moved = False
    torch = _torch()
    has_generator = _has_generator(pristine_args) or _has_generator(pristine_kwargs)
    rng_before = torch.random.get_rng_state() if torch is not None and has_generator else None
    args: Any = None
    kwargs: Any = None
    try:
        args = _resolve(copy.deepcopy(pristine_args), fresh)
        kwargs = _resolve(copy.deepcopy(pristine_kwargs), fresh)
        held += [args, kwargs, values, fresh]
        for k in range(case.repeat):
            if case.fresh and k > 0:
                fresh = {}
                args = _resolve(copy.deepcopy(pristine_args), fresh)
                kwargs = _resolve(copy.deepcopy(pristine_kwargs), fresh)
                held += [args, kwargs, fresh]
            before = _write_counts(args, kwargs)
            # the outcome keeps the last call's count: so does what is reported
            counter.restart(told=k == case.repeat - 1)
            if changed := _restore_classes():
                return _failed(
                    case,
                    t0,
                    f"torch's tensor class was changed before this call "
                    f"({', '.join(sorted(changed)[:3])}): put back",
                )
            values.append(_call_watched(fn, args, kwargs, watch, counter))
            if (why := _after_call(values[-1], args, kwargs, case, fresh)) is not None:
                return _failed(case, t0, why)
            written |= {k for k, n in _write_counts(args, kwargs).items() if n != before.get(k)}
            generator_moved = generator_moved or _generators_moved(fresh)
        if (foreign := _foreign_value(values)) is not None:
            return _failed(case, t0, f"your function returned {foreign}")
        if _oversized(values, MAX_RESULT_ITEMS):
            return _failed(
                case,
                t0,
                f"your function returned more than {MAX_RESULT_ITEMS:,} values, far more than any "
                "case expects: not compared",
            )
        aliased = _aliasing(values, args, kwargs, pristine_args, pristine_kwargs)
        global_rng = rng_before is not None and not torch.equal(
            rng_before, torch.random.get_rng_state()
        )
        if not allow_mutation:
            mutated = _mutated(args, kwargs, pristine_args, pristine_kwargs, written)
    # the student's exception is the information we report (its message made in the tail)
    except Exception as e:
        held.append(e)
        return Outcome(
            case.label,
            error=_student_frame(e.__traceback__),
            seconds=time.perf_counter() - t0,
            raised=[c.__name__ for c in type(e).__mro__],
        )
    value = values[0] if case.repeat == 1 else values
    return Outcome(
        case.label,
        value=value,
        mutated=mutated,
        seconds=time.perf_counter() - t0,
        aliased=aliased,
        global_rng=global_rng,
        generator_moved=generator_moved,
    )


def _call_watched(fn: Callable, args: Any, kwargs: Any, watch: Any, counter: "_StepCounter") -> Any:
    """One call of the answer under the line counter and the watch (and, on the meta device, the
    mode that refuses tensors made elsewhere)."""
    strict = (
        _same_device_mode_class()()
        if any(t.device.type == "meta" for t in _tensors([args, kwargs]))
        else contextlib.nullcontext()
    )
    with counter, strict, watch if watch is not None else contextlib.nullcontext():
        value = fn(*args, **kwargs)
        gc.disable()  # again: the answer may have switched the collector on
    return value


def _failed(case: Case, t0: float, error: str) -> Outcome:
    """The case's outcome when the call (or what it left behind) cannot be compared."""
    return Outcome(case.label, error=error, seconds=time.perf_counter() - t0)


def _after_call(value: Any, args: Any, kwargs: Any, case: Case, fresh: dict) -> str | None:
    """What one call left that must not be compared, or None: torch's tensor class changed, a
    result or an argument holding an object with methods of its own (comparing it would run them,
    unwatched)."""
    if changed := _restore_classes():
        names = ", ".join(sorted(changed)[:3])
        return f"your function changed torch's tensor class ({names}): put back"
    # this call's result now (walking every earlier one again made a case of 3,000 draws
    # quadratic: 2x selfcheck 03's CPU), and all of them once after the loop (an earlier result
    # changed since)
    if (foreign := _foreign_value(value)) is not None:
        return f"your function returned {foreign}"
    given = [a for a, p in zip(args, case.args) if not _is_placeholder(p)]
    given += [kwargs[k] for k, p in case.kwargs.items() if not _is_placeholder(p)]
    resolved = {id(r) for r in [*fresh.values(), *_RESOURCE_CACHE.values()]}
    if (foreign := _foreign_value(given, skip=lambda v: id(v) in resolved)) is not None:
        # an argument the function filled with such an object would run it when compared with
        # its original
        return f"an argument your function was given now holds {foreign}"
    return None


# lines after which a counted call tells ``report_steps`` (then every doubling)
STEPS_REPORTED_FROM = 1 << 10


class _StepCounter:
    """Counts the Python lines executed inside the block (``sys.settrace``): a measure of work that
    does not depend on the machine or its load. Lines run inside torch's C kernels are not lines: a
    vectorised pass over the vocabulary counts as one. A block that removes the counter reports
    -2."""

    def __init__(self, on: bool, report: Callable[[str, int], None] | None = None, label: str = ""):
        self.on, self.steps, self._before = on, -1, None
        self._report, self._label, self._next = report, label, STEPS_REPORTED_FROM
        self._told = report
        # the collector found on while counting (switched off again at once): see _trace
        self.collector = False
        # returned by _trace as it is, not made anew per event: an allocation there could start a
        # collection inside the trace function (white-box red team 25, E10)
        self._bound = self._trace
        self._collector_on, self._collector_off = gc.isenabled, gc.disable

    def restart(self, told: bool = True) -> None:
        """Count a new call from zero (a case repeated keeps the last call's count), telling
        ``report`` or not."""
        self.steps, self._next = -1, STEPS_REPORTED_FROM
        self._report = self._told if told else None

    def _trace(self, frame, event, arg):
        if self._collector_on():
            # _call switches the collector off for the call; switched on again by the answer
            # (gc is reachable under other modules' names), a collection that starts inside this
            # function runs finalizers where CPython pauses tracing: their lines are never counted
            # (white-box red team 25, E10: a vocabulary loop in a __del__ passed every cost cap)
            self._collector_off()
            self.collector = True
        if event == "line":
            self.steps += 1
            if self.steps == self._next and self._report is not None:
                # told as it is reached (1 << 10 lines, then every doubling): what an answer later
                # does to ``steps`` changes nothing the grader already has
                self._next <<= 1
                self._report(self._label, self.steps)
        return self._bound

    def __enter__(self) -> "_StepCounter":
        if self.on:
            self.steps, self._before = 0, sys.gettrace()
            sys.settrace(self._trace)
        return self

    def __exit__(self, *exc) -> None:
        self.pause()

    def resume(self) -> None:
        """Go on counting where the last block stopped (the tail of a call: ``_Tail``)."""
        if self.on and self.steps >= 0:
            self._before = sys.gettrace()
            sys.settrace(self._trace)

    def pause(self) -> None:
        if self.on and self.steps != -1:
            if sys.gettrace() != self._trace:
                self.steps = -2
            sys.settrace(self._before)


def _watch(
    forbidden: Sequence[str], ops: Sequence[str], report: Callable[[str], None] | None = None
) -> Any:
    """A trace.Watch for a check's rules (telling ``report`` each broken one), or None when it has
    none."""
    if not forbidden and not ops:
        return None
    from course_lib.checks.trace import Watch

    watch = Watch(forbidden, ops, report)
    return watch if watch.active else None


def run_cases(check: Check, fn: Callable, cases: Sequence[Case] | None = None) -> list[Outcome]:
    """Call ``fn`` on every case of ``check`` (deep-copied inputs); never raises for student
    errors."""
    if not callable(fn):
        msg = f"expected a function, got {_describe(fn)}"
        return [
            Outcome(c.label, error=msg) for c in (cases if cases is not None else check.cases())
        ]
    watch = _watch(check.forbidden, check.forbidden_ops)
    return [
        _call(fn, c, check.allow_mutation, watch)
        for c in (cases if cases is not None else check.cases())
    ]


def call_cases(
    fn: Callable,
    cases: Sequence[Case],
    allow_mutation: bool = False,
    forbidden: Sequence[str] = (),
    ops: Sequence[str] = (),
    report: Callable[[str], None] | None = None,
    report_steps: Callable[[str, int], None] | None = None,
) -> list[Outcome]:
    """Call ``fn`` on each case (deep-copied inputs), watching for the rules ``forbidden`` and
    ``ops``; never raises for the student's errors. What the verification runs for one check
    (autograde.inside.payload.run_encoded).

    ``report``: told each rule broken while ``fn`` runs, as it happens (``trace.Watch``);
    ``report_steps``: told (case label, lines so far) as a counted call passes 2^10 lines and each
    doubling after (``_StepCounter``)."""
    watch = _watch(forbidden, ops, report)
    return [
        _call(fn, c, allow_mutation, watch, report_steps)
        if callable(fn)
        else Outcome(c.label, error="not a function")
        for c in cases
    ]


def _input_size(case: Case) -> int:
    """How big a case's inputs are (elements of tensors and lists, plus one per scalar), to show the
    smallest first."""
    torch = _torch()

    def size(x: Any, depth: int = 0) -> int:
        if torch is not None and isinstance(x, torch.Tensor):
            return max(1, x.numel())
        if depth < 4 and isinstance(x, (list, tuple)):
            return 1 + sum(size(v, depth + 1) for v in x)
        if depth < 4 and isinstance(x, dict):
            return 1 + sum(size(v, depth + 1) for v in x.values())
        return 1

    return size(list(case.args)) + size(dict(case.kwargs))


def _show_input(case: Case, limit: int = 200) -> str:
    """The case's call as text when it is short enough to read (small tensors written out), else
    ""."""
    torch = _torch()

    def show(x: Any) -> str:
        if torch is not None and isinstance(x, torch.Tensor):
            if x.device.type == "meta" or x.numel() > 16:
                return f"<tensor of shape {tuple(x.shape)}, {str(x.dtype).removeprefix('torch.')}>"
            return f"tensor({x.tolist()}, dtype={str(x.dtype).removeprefix('torch.')})"
        if type(x) is Resource:
            return f"<{x.name}>"
        if type(x) is Generator:
            return f"Generator(seed={x.seed})"
        return repr(x)

    text = ", ".join(
        [show(a) for a in case.args] + [f"{k}={show(v)}" for k, v in case.kwargs.items()]
    )
    return f"\ninput: ({text})" if len(text) <= limit else ""


def judge(
    check: Check, cases: Sequence[Case], outcomes: Sequence[Outcome], expected: Sequence[Any]
) -> CheckResult:
    """Compare outcomes against expected values (one per case) with the check's comparators.

    Failures are listed smallest input first (the first one shown is the easiest to reproduce by
    hand), each with the call written out when it is short."""
    failures: list[tuple[str, str]] = []
    if len(expected) != len(cases):
        return CheckResult(
            check.name,
            len(cases),
            [("*", "internal error: expected values and cases differ in number")],
            check.hint,
        )
    if len(outcomes) != len(cases):
        return CheckResult(
            check.name,
            len(cases),
            [
                (
                    "*",
                    f"{len(outcomes)} results came back for {len(cases)} cases: a "
                    "result that cannot be read back (too large, or never finished "
                    "being read) counts as wrong",
                )
            ],
            check.hint,
        )
    for case, out, exp in zip(cases, outcomes, expected):
        if (msg := _case_failure(check, case, out, exp)) is not None:
            failures.append((case.label, msg))
    failures += _cost_failures(check.contract or Contract(), outcomes)
    ran = sorted({r for out in outcomes for r in out.forbidden})
    if ran:
        failures.append(
            (
                "rules",
                f"while it ran, your function used {', '.join(ran)}, which this exercise asks "
                "you not to use",
            )
        )
    by_label = {c.label: c for c in cases}
    failures = [
        (
            label,
            msg
            if label not in by_label or msg.startswith("internal error")
            else msg + _show_input(by_label[label]),
        )
        for label, msg in failures
    ]
    failures.sort(
        key=lambda f: (
            _input_size(by_label[f[0]]) if f[0] in by_label else (1 << 62 if f[0] == "rules" else 0)
        )
    )
    return CheckResult(check.name, len(cases), failures, check.hint)


def _case_failure(check: Check, case: Case, out: Outcome, exp: Any) -> str | None:
    """Why one case failed (its outcome against its expected value), or None."""
    if out.label != case.label:
        return "internal error: outcome for a different case"
    if case.raises is not None:
        if out.error is not None and case.raises in out.raised:
            return None
        if out.error is not None:
            return f"expected {case.raises}, but {out.error}"
        return f"expected your function to raise {case.raises}, it returned {_describe(out.value)}"
    if out.error is not None:
        if case.compare in _META_COMPARES and _meta_cannot_run(out.error):
            # an operator with no meta kernel says nothing about where tensors are made
            return None
        return out.error
    try:
        msg = (case.compare or check.compare)(exp, out.value, case)
    except Exception as e:  # an odd return value must fail the case, not crash the grader
        msg = (
            f"your function returned {_describe(out.value)}, which could not be compared "
            f"({type(e).__name__}: {e})"
        )
    return msg if msg is not None else _behaviour_failure(check.contract or Contract(), case, out)


def _behaviour_failure(contract: Contract, case: Case, out: Outcome) -> str | None:
    """Why a right value still fails: the input changed, memory shared with it, the wrong random
    generator, a draw where none is allowed, or not a Python number; None if none."""
    if out.mutated:
        return (
            f"your function modified its input ({', '.join(out.mutated)}) in place; "
            "work on a copy (x = x.clone()) or use out-of-place operations"
        )
    if contract.new_output and out.aliased:
        return (
            "your function returned a tensor that shares memory with "
            f"{', '.join(out.aliased)} (the same "
            "tensor, a view or slice of it, or a buffer kept between calls); return a new "
            "tensor (e.g. .clone())"
        )
    if (
        contract.generator
        and out.global_rng
        and (_has_generator(case.args) or _has_generator(case.kwargs))
    ):
        return (
            "your function drew random numbers from torch's global generator; draw them from "
            "the `generator` argument (torch.multinomial(..., generator=generator), "
            "torch.rand(..., generator=generator)) so that the same seed gives the same samples"
        )
    if case.no_draw and out.generator_moved:
        return (
            "here the text says no random number is drawn, but your function drew from "
            "`generator` (its "
            "state moved): a caller who shares that generator would get other samples "
            "afterwards"
        )
    returned = out.value if case.repeat > 1 and isinstance(out.value, list) else [out.value]
    odd = next((v for v in returned if not _is_number(v)), None) if contract.number else None
    if contract.number and odd is not None:
        return (
            f"your function returned {_describe(odd)}; the exercise asks for a Python float "
            "(a plain number, not a tensor)"
        )
    return None


# lines any answer may spend on set-up whatever the size (a helper's body, a few checks)
COST_SLACK = 200


COUNTER_REMOVED = (
    "your function removed the line counter the check uses to measure its work (sys.settrace)"
)
# a case that counts lines always comes back counted (>= 0) from the engine: "not counted" (-1) came
# from elsewhere (a white-box red team's forged outcomes turned the count off and both cost rules
# accepted it)
NOT_COUNTED = (
    "no count of the Python lines your function ran came back for this case, so its "
    "cost is not shown"
)


def _cost_failures(contract: Contract, outcomes: Sequence[Outcome]) -> list[tuple[str, str]]:
    """A failure when the work (Python lines) on the large case exceeds ``ratio`` x the small
    case's, or the capped case's work its cap."""
    by = {o.label: o for o in outcomes}
    failures = []
    for label, cap in contract.cost_cap:
        o = by.get(label)
        if o is not None and o.error is None and o.steps == -2:
            failures.append((label, COUNTER_REMOVED))
        elif o is not None and o.error is None and o.steps == -1:
            failures.append((label, NOT_COUNTED))
        elif o is not None and o.error is None and o.steps > cap:
            failures.append(
                (
                    label,
                    f"your function ran {o.steps:,} Python lines here, more than {cap:,}: a loop "
                    "over a size the exercise says the work must not depend on runs more than that",
                )
            )
    return failures + _cost_ratio_failures(contract, by)


def _cost_ratio_failures(contract: Contract, by: dict[str, Outcome]) -> list[tuple[str, str]]:
    if not contract.cost:
        return []
    small, large, ratio = contract.cost
    a, b = by.get(small), by.get(large)
    if a is None or b is None or a.error is not None or b.error is not None:
        return []  # a case that failed already says so; the cost of an error says nothing
    if a.steps == -2 or b.steps == -2:
        return [(large, COUNTER_REMOVED)]
    if a.steps == -1 or b.steps == -1:
        return [(large, NOT_COUNTED)]
    if a.steps < 0 or b.steps < 0 or b.steps <= ratio * a.steps + COST_SLACK:
        return []
    return [
        (
            large,
            f"your function ran {b.steps:,} Python lines here but {a.steps:,} on {small!r}: its "
            "work grows with a size the exercise says it must not depend on",
        )
    ]


def _is_number(x: Any) -> bool:
    """A Python int or float (numpy's float64 subclasses float); bool and tensors are not numbers
    here."""
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def rule_failures(
    check: Check, fn: Callable | None = None, source: str | None = None
) -> list[tuple[str, str]]:
    """Failures for forbidden calls in the answer: read from ``source`` (the grader: the answer
    cell's text) or, without it, from ``fn``'s own source with names resolved in its globals (a
    notebook)."""
    if not check.forbidden:
        return []
    from course_lib.checks.rules import function_violations, violations

    found = (
        violations(source, check.forbidden)
        if source is not None
        else (function_violations(fn, check.forbidden) if fn is not None else [])
    )
    return [("rules", v.message()) for v in found]


HISTORY: list[CheckResult] = []
"""Every check evaluated in this process, in order (for a ``check_all()``-style summary)."""


def evaluate(
    check: Check,
    fn: Callable,
    expected: Sequence[Any] | None = None,
    *,
    raise_on_fail: bool = True,
    quiet: bool = False,
    unattempted_ok: bool = False,
) -> CheckResult:
    """Run and judge ``check`` on ``fn`` in this process; raise ``CheckFailed`` with the message on
    failure.

    ``expected`` defaults to each case's own ``Case.expected`` (visible checks). ``unattempted_ok``:
    an answer that is still the stub (``not_attempted``) is reported as such instead of raising.
    """
    cases = check.cases()
    if expected is None:
        missing = [c.label for c in cases if c.expected is MISSING and c.raises is None]
        if missing:
            raise ValueError(f"check {check.name!r}: cases {missing} have no expected value")
        expected = [c.expected for c in cases]
    outcomes = run_cases(check, fn, cases)
    if unattempted_ok and not_attempted(outcomes):
        result = CheckResult(check.name, len(cases), [("*", "not attempted")], check.hint)
        HISTORY.append(result)
        print(
            f"· {check.name}: not attempted yet ({check.exercise} still raises "
            "NotImplementedError); the notebook goes on. Graded, this check counts as failed."
        )
        return result
    result = judge(check, cases, outcomes, expected)
    result.failures += rule_failures(check, fn)
    HISTORY.append(result)
    if not result.passed and raise_on_fail:
        raise CheckFailed(result.message) from None
    if result.passed and not quiet:
        print("✓ " + result.message)
    return result


# --------------------------------------------------------------------------------------------
# registries
class Registry:
    """Checks collected from the ``CHECKS`` lists of the modules a package names, looked up by name.

    A plain module holds its own ``CHECKS``. A package names its modules in its ``__init__``:
    ``CHECK_MODULES`` (each defines ``ASSIGNMENT`` and ``CHECKS``) and, optionally,
    ``ENGINE_MODULES`` (the engine's own modules it imports when first needed, loaded here with the
    checks: the verification's seal covers the modules loaded before any cell runs,
    autograde/inside/relay.py). Nothing else is imported: a file dropped into the folder is never
    run (autograde/tests/test_registries.py: every name resolves, no module is left out).
    """

    def __init__(self, package: str):
        self.package = package
        self._checks: dict[str, tuple[Check, Any]] | None = None

    def modules(self) -> list[Any]:
        """The modules holding this registry's checks (the package itself if it is a plain
        module)."""
        pkg = importlib.import_module(self.package)
        if not hasattr(pkg, "__path__"):
            return [pkg]
        if not isinstance(getattr(pkg, "CHECK_MODULES", None), tuple):
            raise ValueError(
                f"{self.package} must name its check modules: CHECK_MODULES = ('<module>', ...)"
            )
        modules = [importlib.import_module(f"{self.package}.{name}") for name in pkg.CHECK_MODULES]
        for name in getattr(pkg, "ENGINE_MODULES", ()):
            importlib.import_module(f"{self.package}.{name}")
        return modules

    def _load(self) -> dict[str, tuple[Check, Any]]:
        if self._checks is None:
            found: dict[str, tuple[Check, Any]] = {}
            for mod in self.modules():
                for chk in getattr(mod, "CHECKS", []):
                    if chk.name in found:
                        raise ValueError(
                            f"check {chk.name!r} is defined in both "
                            f"{found[chk.name][1].__name__} and {mod.__name__}"
                        )
                    found[chk.name] = (chk, mod)
            self._checks = found
        return self._checks

    def get(self, name: str) -> Check:
        """The check called ``name``; KeyError listing the known names otherwise."""
        return self.lookup(name)[0]

    def lookup(self, name: str) -> tuple[Check, Any]:
        """(check, the module that defines it)."""
        checks = self._load()
        if name not in checks:
            raise KeyError(f"no check named {name!r} in {self.package}; known: {sorted(checks)}")
        return checks[name]

    def all(self) -> list[tuple[Check, Any]]:
        """Every (check, module) in name order."""
        return [self._load()[n] for n in sorted(self._load())]


VISIBLE = Registry("course_lib.checks")


def not_attempted(outcomes: Sequence[Outcome]) -> bool:
    """Every case stopped at NotImplementedError: the stub is still there (a half-written answer
    that raises it only on some inputs counts as failed, so that its passing cases are not
    hidden)."""
    return bool(outcomes) and all(
        o.error is not None and "NotImplementedError" in o.raised for o in outcomes
    )


def _names_used(fn: Callable) -> set[str]:
    """Global names the code of ``fn`` (and of functions and lambdas defined inside it) refers
    to."""
    names, stack = set(), [getattr(fn, "__code__", None)]
    while stack:
        code = stack.pop()
        if code is not None:
            names.update(code.co_names)
            stack.extend(c for c in code.co_consts if hasattr(c, "co_names"))
    return names


def failing_upstream(chk: Check, fn: Callable) -> list[str]:
    """The exercises in ``chk.uses`` that ``fn`` calls by name and whose own visible check fails (or
    that are not attempted yet), with the student's functions of the notebook ``fn`` was defined in
    (issue 35: a perplexity failing because sequence_logprob is wrong should say so first)."""
    namespace, used = getattr(fn, "__globals__", {}), _names_used(fn)
    bad, kept = [], len(HISTORY)
    for dep in chk.uses:
        dep_fn = namespace.get(dep)
        if dep not in used or not callable(dep_fn):
            continue
        try:
            ok = evaluate(
                VISIBLE.get(dep), dep_fn, raise_on_fail=False, quiet=True, unattempted_ok=True
            ).passed
        # a broken dependency is the student's to fix; it must not hide this check's result
        except Exception:
            ok = False
        if not ok:
            bad.append(dep)
    del HISTORY[kept:]
    return bad


def check(name: str, fn: Callable) -> None:
    """Notebook one-liner: run the visible check ``name`` on the student's ``fn``; raise CheckFailed
    if it fails.

    An exercise not attempted yet (every case raises NotImplementedError) prints so and lets "Run
    All" go on in a student's own run; a grading run (``COURSE_GRADING=1``, set by the grader)
    raises as for any failure, so the test cell scores 0 there. Returns None so a test cell shows
    only the printed verdict (results are kept in ``HISTORY``). A failure whose answer calls another
    exercise that fails its own check names that exercise first (not in a grading run: the grader
    writes its own page).
    """
    grading = os.environ.get("COURSE_GRADING") == "1"
    chk = VISIBLE.get(name)
    result = evaluate(chk, fn, unattempted_ok=not grading, raise_on_fail=grading or not chk.uses)
    if result.passed or grading or result.failures == [("*", "not attempted")]:
        return None
    first = ""
    if bad := failing_upstream(chk, fn):
        which = (
            f"{bad[0]}, which fails its" if len(bad) == 1 else f"{', '.join(bad)}, which fail their"
        )
        first = (
            f"{name} calls your {which} own check: fix {bad[0]} first (run its check cell); the "
            "failures below may come from it.\n"
        )
    raise CheckFailed(first + result.message) from None


# at import: before any cell of a notebook runs (the set-up cell imports the checks)
_take_pristine_classes()
