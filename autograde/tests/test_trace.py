"""Forbidden routines are found when they run (course_lib.checks.trace), however the answer reached
them.

Guarantee (docs/threat-model.md, rules): a check whose exercise forbids routines fails an answer
that ran one of them, in the notebook and in the grader's verification, whatever route the answer
took to it: every route a second blind red team (session 8) used to reach torch's softmax from a
string is here, and each is caught by the operator it runs; honest answers, including the dynamic
ones an honest class wrote (getattr(torch, dtype_name)), run nothing forbidden. The text reading
(test_contracts.py) and this trace are two halves of one rule.
"""

from __future__ import annotations

import functools
import inspect
import json
import pickle
import pkgutil
import runpy
import string
import sys
import timeit
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograde.inside.codec import encode_cases, outcome_from_json
from autograde.inside.payload import run_encoded
from course_lib.checks.engine import VISIBLE, evaluate
from course_lib.checks.logits_softmax import SOFTMAX_FORBIDDEN
from course_lib.checks.sampling import GREEDY_FORBIDDEN, HF_FORBIDDEN
from course_lib.checks.trace import Watch, ops_for, rule_names


def _module_file(tmp_path) -> str:
    p = tmp_path / "rowops.py"
    p.write_text("import torch\ndef f(x):\n    return torch.softmax(x, -1)\n")
    return str(p)


ROUTES = {
    "inspect.getmembers": lambda x, p: dict(inspect.getmembers(F))["soft" + "max"](x, dim=-1),
    "inspect.getattr_static": lambda x, p: inspect.getattr_static(torch.special, "soft" + "max")(
        x, -1
    ),
    "pkgutil.resolve_name": lambda x, p: pkgutil.resolve_name("torch.nn.functional:soft" + "max")(
        x, dim=-1
    ),
    "pickle": lambda x, p: pickle.loads(b"ctorch.special\nsoft" + b"max\n.")(x, -1),
    "string.Formatter": lambda x, p: string.Formatter().get_field("0.soft" + "max", (F,), {})[0](
        x, dim=-1
    ),
    "torch.jit": lambda x, p: torch.jit.CompilationUnit(
        "def f(x):\n    return torch.soft" + "max(x, -1)\n"
    ).f(x),
    "timeit": lambda x, p: (
        lambda out: (
            timeit.timeit(
                "out.append(torch.soft" + "max(x, -1))",
                number=1,
                globals={"x": x, "torch": torch, "out": out},
            ),
            out[0],
        )[1]
    )([]),
    "runpy": lambda x, p: runpy.run_path(p)["f"](x),
    "computed getattr": lambda x, p: getattr(torch, "".join(["soft", "max"]))(x, -1),
    "vars": lambda x, p: vars(torch)["softmax"](x, -1),
    "attention with the logits as mask": lambda x, p: F.scaled_dot_product_attention(
        torch.zeros(1, x.shape[0], 4),
        torch.zeros(1, x.shape[1], 4),
        torch.eye(x.shape[1])[None],
        attn_mask=x[None],
    )[0],
    "logaddexp reduce": lambda x, p: torch.exp(
        x - functools.reduce(torch.logaddexp, x.unbind(-1))[..., None]
    ),
    "numpy logaddexp reduce": lambda x, p: torch.exp(
        x - torch.from_numpy(np.logaddexp.reduce(x.numpy(), axis=-1, keepdims=True))
    ),
    # the sparse kernels, on a tensor made sparse with every entry stored (bug zoo:
    # `softmax__torch_sparse_kernel`)
    "sparse softmax": lambda x, p: getattr(torch.sparse, "soft" + "max")(
        x.to_sparse(), -1
    ).to_dense(),
    "sparse log_softmax": lambda x, p: (
        getattr(torch.sparse, "log_soft" + "max")(x.to_sparse(), -1).to_dense().exp()
    ),
    "masked softmax": lambda x, p: getattr(torch, "_masked_soft" + "max")(
        x, torch.zeros_like(x, dtype=torch.bool)
    ),
}
HONEST = {
    "written out": lambda x: (
        (x - x.amax(-1, keepdim=True)).exp()
        / (x - x.amax(-1, keepdim=True)).exp().sum(-1, keepdim=True)
    ),
    "dtype by name": lambda x: (lambda w: (w.exp() / w.exp().sum(-1, keepdim=True)).to(x.dtype))(
        (x - x.amax(-1, keepdim=True)).to(getattr(torch, "float64"))
    ),
    "numpy": lambda x: torch.from_numpy(
        (lambda e: e / e.sum(-1, keepdims=True))(
            np.exp(x.numpy() - x.numpy().max(-1, keepdims=True))
        )
    ),
}


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_every_route_to_softmax_is_seen_when_it_runs(route, tmp_path):
    x = torch.randn(3, 5)
    watch = Watch(SOFTMAX_FORBIDDEN, ops_for(SOFTMAX_FORBIDDEN))
    with watch:
        y = ROUTES[route](x, _module_file(tmp_path))
    # the route really computes a softmax
    assert torch.allclose(y.float(), torch.softmax(x, -1), atol=1e-5)
    assert watch.seen, route
    # the grader passes on only the texts a watch can record (verify._known_rules): every one it did
    # is among them
    assert watch.seen <= rule_names(SOFTMAX_FORBIDDEN), watch.seen - rule_names(SOFTMAX_FORBIDDEN)


@pytest.mark.parametrize("honest", sorted(HONEST))
def test_honest_softmaxes_run_nothing_forbidden(honest):
    x = torch.randn(3, 5)
    watch = Watch(SOFTMAX_FORBIDDEN, ops_for(SOFTMAX_FORBIDDEN))
    with watch:
        y = HONEST[honest](x)
    assert torch.allclose(y.float(), torch.softmax(x, -1), atol=1e-5)
    assert watch.seen == set(), honest


def test_python_routines_and_packages_are_seen_through_strings():
    x = torch.randn(2, 6)
    watch = Watch(GREEDY_FORBIDDEN + HF_FORBIDDEN)
    with watch:
        pickle.loads(b"ccourse_lib.generate\ngre" + b"edy\n.")(x)
    assert watch.seen == {"course_lib.generate.greedy"}
    pytest.importorskip("transformers")
    watch = Watch(HF_FORBIDDEN)
    with watch:
        pkgutil.resolve_name("transformers.generation.logits_process:TopKLogitsWarper")(top_k=2)(
            None, x.clone()
        )
    assert watch.seen == {"transformers.*"}


def test_the_check_fails_such_an_answer_in_the_notebook_and_in_the_verification_process():
    """Both places the engine runs an answer: evaluate (the notebook's check) and run_encoded (the
    grader's sandboxed verification, whose outcomes cross the boundary as JSON)."""

    def softmax(logits):
        return pkgutil.resolve_name("torch.nn.functional:soft" + "max")(logits, dim=-1)

    def mine(logits):
        e = (logits - logits.amax(-1, keepdim=True)).exp()
        return e / e.sum(-1, keepdim=True)

    check = VISIBLE.get("softmax")
    result = evaluate(check, softmax, raise_on_fail=False, quiet=True)
    assert not result.passed and "while it ran, your function used" in result.message, (
        result.message
    )
    assert evaluate(check, mine, raise_on_fail=False, quiet=True).passed
    payload = encode_cases(
        check.cases(), check.allow_mutation, check.forbidden, check.forbidden_ops
    )
    outcomes = [outcome_from_json(d) for d in json.loads(run_encoded(softmax, payload))]
    assert all(o.forbidden for o in outcomes if o.error is None)
    assert not any(
        o.forbidden for o in (outcome_from_json(d) for d in json.loads(run_encoded(mine, payload)))
    )


def test_a_forged_forbidden_field_is_malformed():
    for bad in (3, "x", [1], [None]):
        with pytest.raises(ValueError):
            outcome_from_json({"label": "a", "error": None, "value": None, "forbidden": bad})


def test_an_answer_that_switches_the_watch_off_is_seen_doing_so():
    """The watch shares the answer's process: switching it off (and leaving it off) is itself a
    finding."""

    from torch.utils._python_dispatch import _pop_mode

    x = torch.randn(2, 4)
    watch = Watch(SOFTMAX_FORBIDDEN + GREEDY_FORBIDDEN, ops_for(SOFTMAX_FORBIDDEN))
    with watch:
        sys.setprofile(None)
        _pop_mode()
        torch.softmax(x, -1)
    assert any("switching off" in r for r in watch.seen), watch.seen
    assert watch.seen <= rule_names(SOFTMAX_FORBIDDEN + GREEDY_FORBIDDEN), watch.seen
    assert sys.getprofile() is None  # the watch restored what was there before it


def test_watching_operators_does_not_import_torch_dynamo():
    """The watch costs no import: torch wraps a dispatch mode's handler in torch._dynamo.disable
    unless the mode says not to, and the first call then imports torch._dynamo (~800 modules,
    1.6-1.9 s per checking process, twice per student-notebook). Control: a mode that keeps torch's
    default does import it."""
    import subprocess

    probe = (
        "import sys, torch\nfrom course_lib.checks.trace import Watch\nw = "
        "Watch(ops=['_softmax'])\n"
        "with w:\n    torch.softmax(torch.ones(3), 0)\n"
        "print(sorted(w.seen), 'torch._dynamo' in sys.modules)\n"
    )
    control = (
        "import sys, torch\nfrom torch.utils._python_dispatch import TorchDispatchMode\n"
        "class M(TorchDispatchMode):\n    def __torch_dispatch__(self, f, t, a=(), k=None):\n"
        "        return f(*a, **(k or {}))\n"
        "with M():\n    torch.softmax(torch.ones(3), 0)\nprint('torch._dynamo' in sys.modules)\n"
    )
    run = functools.partial(subprocess.run, capture_output=True, text=True, check=True, timeout=120)
    assert (
        run([sys.executable, "-c", probe]).stdout.split("\n")[0]
        == '["torch\'s softmax kernel"] False'
    )
    assert run([sys.executable, "-c", control]).stdout.strip() == "True"


EVADE = (Path(__file__).parent / "data" / "redteam7_evade.py").read_text()


def test_switching_the_watch_off_from_c_is_seen_and_honest_printing_is_not():
    """An answer (a red team's, replayed from data/redteam7_evade.py) removed the profile hook with
    list(map(sys.setprofile, [None])) (a call from C makes no profile event), popped the dispatch
    mode, ran torch.softmax and put everything back: unseen, 8/26. An audit hook (which cannot be
    removed) sees every sys.setprofile/settrace while a watch is on, and the dispatch levers are
    seen when the student's code pulls them (not when torch's own code does: printing a tensor
    disables the modes). Control: with the audit hook's record switched off, the evader is
    unseen."""
    import torch.utils._python_dispatch as pd

    from course_lib.checks import trace

    namespace: dict = {}
    exec(compile(EVADE, "<evade>", "exec"), namespace)
    x = torch.randn(3, 5)

    def seen(fn) -> set:
        w = Watch(SOFTMAX_FORBIDDEN, ops_for(SOFTMAX_FORBIDDEN))
        with w:
            out = fn(x)
        assert torch.allclose(out, torch.softmax(x, -1), atol=1e-6)
        return w.seen

    assert any("sys.setprofile" in r for r in seen(namespace["_SMX"]))

    def honest_printing(x):
        print(x)
        z = (x - x.amax(-1, keepdim=True)).exp()
        return z / z.sum(-1, keepdim=True)

    def modes_off(x):
        with pd._disable_current_modes():
            return list(map(getattr(torch, "soft" + "max"), [x], [-1]))[0]

    assert seen(honest_printing) == set()
    assert any("_disable_current_modes" in r for r in seen(modes_off))
    trace._OWN[0] += 1  # the audit hook takes every switch for the watch's own
    try:
        assert seen(namespace["_SMX"]) == set()
    finally:
        trace._OWN[0] -= 1


def test_dispatch_switched_off_from_c_is_seen_when_the_notebook_runs_next():
    """An answer (a red team's) entered torch._C._DisableTorchDispatch (a C context manager: no
    profile event) and called logits.softmax, 8/8 on 02's softmax exercises; popping the mode from C
    through map() hides the pop too. The watch now checks, on each call the notebook's code (not
    torch's, not a library's) makes, that its dispatch mode is still in play; torch's own switching
    (printing a tensor) is not counted. Control: with that check off, all three are unseen."""
    import operator

    C = getattr(torch, "_" + "C")

    def guard(logits):
        with getattr(C, "Disable" + "TorchFunction")(), getattr(C, "_Disable" + "TorchDispatch")():
            return getattr(logits, "soft" + "max")(-1)

    def guard_from_c(logits):
        g = getattr(C, "_Disable" + "TorchDispatch")()
        next(map(operator.methodcaller("__enter__"), [g]))
        try:
            return next(map(operator.methodcaller("softmax", -1), [logits]))
        finally:
            next(map(operator.methodcaller("__exit__", None, None, None), [g]))

    def pop_from_c(logits):
        pop, push = (
            getattr(C, "_pop_torch_dispatch" + "_stack"),
            getattr(C, "_push_on_torch_dispatch" + "_stack"),
        )
        mode = list(map(pop, [None]))[0]
        try:
            return next(map(operator.methodcaller("softmax", -1), [logits]))
        finally:
            list(map(push, [mode]))

    def honest(logits):
        print(logits)
        z = (logits - logits.amax(-1, keepdim=True)).exp()
        return z / z.sum(-1, keepdim=True)

    x = torch.randn(2, 5)

    def seen(fn, check=True):
        w = Watch(SOFTMAX_FORBIDDEN, ops_for(SOFTMAX_FORBIDDEN))
        if not check:
            w._dispatch_off = lambda: False
        with w:
            out = fn(x)
        assert torch.allclose(out, torch.softmax(x, -1), atol=1e-6)
        return w.seen

    for fn in (guard, guard_from_c, pop_from_c):
        assert any("dispatch" in r for r in seen(fn)), fn.__name__
        assert seen(fn, check=False) == set(), fn.__name__
    assert seen(honest) == set()


def test_a_watch_swapped_on_its_class_during_the_call_still_records():
    """White-box red team 23 (D9): the answer swapped `Watch.saw` for a no-op while it ran
    torch.softmax and put it back before returning (the seal compares classes between calls only):
    nothing was recorded, 02 20/26. The hook and the dispatch mode now record through a closure made
    when the watch starts; swapping any of the class's methods during the call changes nothing
    recorded. Control: the same swap with the routine not called."""
    from course_lib.checks.trace import Watch

    def blinded(x):
        saved = {
            name: Watch.__dict__[name]
            for name in ("saw", "_profile_function", "_dispatch_off", "_on_call")
            if name in Watch.__dict__
        }
        for name in saved:
            setattr(Watch, name, lambda *a, **k: None)
        try:
            return torch.softmax(x, -1)
        finally:
            for name, f in saved.items():
                setattr(Watch, name, f)

    reported: list[str] = []
    with Watch(SOFTMAX_FORBIDDEN, report=reported.append) as watch:
        blinded(torch.randn(3, 5))
    assert watch.seen and reported, (watch.seen, reported)
    with Watch(SOFTMAX_FORBIDDEN, report=reported.clear) as quiet:
        torch.exp(torch.randn(3))
    assert not quiet.seen
