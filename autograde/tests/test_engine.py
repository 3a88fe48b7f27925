"""The check engine (course_lib.checks.engine): codec, comparators, failure messages, statistics. ~2
s."""

import json
import math
import sys

import numpy as np
import pytest
import torch

from autograde.inside.codec import dumps, encode, encode_cases, loads, outcome_from_json
from autograde.inside.payload import run_encoded
from course_lib.checks.engine import (
    Case,
    Check,
    CheckFailed,
    Generator,
    Outcome,
    Registry,
    Resource,
    allclose,
    evaluate,
    exact,
    judge,
    multinomial_fit,
    run_cases,
    set_equal,
)


def _cases():
    return [
        Case((torch.zeros(4),), label="uniform", expected=torch.full((4,), 0.25)),
        Case(
            (torch.tensor([1000.0, 999.0]),),
            label="huge",
            expected=torch.tensor([1 / (1 + math.exp(-1)), 1 / (1 + math.e)]),
        ),
    ]


SOFTMAX = Check(
    "softmax", "softmax", _cases, allclose(rtol=1e-5, atol=1e-7), hint="subtract the max"
)


def test_codec_round_trips_every_supported_type():
    values = [
        None,
        True,
        0,
        -(2**70),
        1.5,
        math.nan,
        math.inf,
        -math.inf,
        "µ",
        [1, [2.0]],
        (1, (2,)),
        {"a": 1, "$b": 2},
        {1: "x", (2, 3): "y"},
        {3, 1, 2},
        frozenset(),
        b"\x00\xff",
        np.float32(0.1),
        np.int64(7),
        np.array([[1.5, np.nan], [np.inf, -0.0]], dtype=np.float32),
        np.arange(5, dtype=np.int16),
        torch.tensor([0.1, math.nan, -math.inf]),
        torch.arange(6).reshape(2, 3),
        torch.tensor([True, False]),
        torch.tensor(2.5, dtype=torch.float64),
        torch.tensor([1.0, 2.0], dtype=torch.bfloat16),
        Resource("model"),
        Generator(4),
    ]
    for v in values:
        text = dumps(v)
        assert "NaN" not in text and "Infinity" not in text
        back = loads(text)
        assert exact()(v if not isinstance(v, frozenset) else set(v), back) is None, (v, back)


def test_codec_keeps_float32_bits_and_rejects_unknown_types():
    x = torch.randn(100, generator=torch.Generator().manual_seed(0))
    assert torch.equal(loads(dumps(x)), x)
    with pytest.raises(TypeError):
        encode(object())
    with pytest.raises(TypeError):
        encode(np.array(["a"], dtype=object))
    for bad in [
        '{"$pickle": "x"}',
        '{"$tensor": {"dtype": "float32", "shape": [3], "data": [1.0]}}',
        '{"$a": 1, "b": 2}',
        "NaN",
    ]:
        with pytest.raises((ValueError, KeyError)):
            loads(bad)


def test_allclose_messages_say_what_is_wrong():
    cmp = allclose(rtol=1e-5, atol=1e-8)
    e = torch.tensor([0.5, 0.5])
    assert cmp(e, torch.tensor([0.5, 0.5])) is None
    assert "wrong shape: expected (2,), got (1, 2)" in cmp(e, e.reshape(1, 2))
    assert "wrong dtype: expected torch.float32, got torch.float64" in cmp(e, e.double())
    assert "expected a torch.Tensor, got list" in cmp(e, [0.5, 0.5])
    assert "got nan at index 1" in cmp(e, torch.tensor([0.5, math.nan]))
    msg = cmp(e, torch.tensor([0.5, 0.6]))
    assert "1 of 2 values differ" in msg and "index 1" in msg and "0.6" in msg
    # a 0-d tensor is accepted where a number is expected
    assert cmp(2.0, torch.tensor(2.0)) is None
    assert "expected 2, got 2.1" in cmp(2.0, 2.1)
    assert cmp(math.inf, math.inf) is None and cmp(math.nan, math.nan) is None
    assert cmp({"p": [1.0, (2.0,)]}, {"p": [1.0, (2.0,)]}) is None
    assert "at ['p'][1][0]" in cmp({"p": [1.0, (2.0,)]}, {"p": [1.0, (2.5,)]})


def test_exact_and_set_equal():
    assert exact()([1, 2, 3], [1, 2, 3]) is None
    assert "position 1" in exact()([1, 2, 3], [1, 5, 3])
    assert exact()(1, 1.0) is not None  # an int answer is not a float answer
    assert exact()(torch.tensor([1, 2]), torch.tensor([1, 2])) is None
    assert "dtype" in exact()(torch.tensor([1, 2]), torch.tensor([1, 2], dtype=torch.int32))
    assert set_equal()([3, 1], torch.tensor([1, 3])) is None
    assert "missing [3]" in set_equal()([3, 1], [1, 2])
    assert "duplicate" in set_equal()([1, 2], [1, 1, 2])


def test_student_errors_mutation_and_wrong_types_are_reported(tmp_path):
    src = tmp_path / "student.py"
    src.write_text(
        "import torch\n"
        "def crash(x):\n    return x / undefined_name\n"
        "def mutate(x):\n    x -= x.max()\n    return torch.exp(x) / torch.exp(x).sum()\n"
        "def naive(x):\n    return torch.exp(x) / torch.exp(x).sum()\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        import student
    finally:
        sys.path.remove(str(tmp_path))
    with pytest.raises(CheckFailed) as e:
        evaluate(SOFTMAX, student.crash)
    assert "raised NameError" in str(e.value) and "return x / undefined_name" in str(e.value)
    assert "Hint: subtract the max" in str(e.value)
    r = evaluate(SOFTMAX, student.mutate, raise_on_fail=False)
    assert [f[0] for f in r.failures][
        0
    ] == "huge" and "modified its input (argument 1)" in r.failures[0][1]
    # x -= x.max() also writes the all-zero row, whose values stay the same: still an in-place write
    assert {f[0] for f in r.failures[1:]} == {"uniform", "uniform [called twice]"}
    assert all("argument 1, written and then restored" in f[1] for f in r.failures[1:])
    r = evaluate(SOFTMAX, student.naive, raise_on_fail=False)
    assert "nan" in r.failures[0][1] and "overflow" in r.failures[0][1]
    assert not evaluate(SOFTMAX, 3, raise_on_fail=False).passed
    assert evaluate(SOFTMAX, lambda x: torch.softmax(x, -1), quiet=True).passed


def test_out_of_process_path_matches_in_process():
    """Encode inputs -> run student code -> JSON outcomes -> judge: same verdict as evaluate()."""

    def naive(x):
        return torch.exp(x) / torch.exp(x).sum()

    cases = SOFTMAX.cases()
    outcomes = [outcome_from_json(d) for d in json.loads(run_encoded(naive, encode_cases(cases)))]
    remote = judge(SOFTMAX, cases, outcomes, [c.expected for c in cases])
    local = evaluate(SOFTMAX, naive, raise_on_fail=False)
    assert remote.failures == local.failures and not remote.passed


def test_multinomial_fit_false_fail_bound_is_exact_for_a_binomial():
    """Sum the Binomial(n, p) mass of every count the comparator rejects: it must be <= 1e-6."""
    cmp, n, p = multinomial_fit(false_fail=1e-6), 400, 0.3
    expected = [1 - p, p]
    rejected_mass = 0.0
    for c in range(n + 1):
        if cmp(expected, [1] * c + [0] * (n - c)) is not None:
            rejected_mass += math.comb(n, c) * p**c * (1 - p) ** (n - c)
    assert 0 < rejected_mass <= 1e-6
    # and it has power: a sampler off by 0.15 is caught at n = 400 (0.1 is not: n * KL = 9 <
    # log(4e6))
    assert cmp(expected, [1] * 180 + [0] * 220) is not None


def test_multinomial_fit_with_torch_sampling_and_zero_probabilities():
    probs = torch.tensor([0.5, 0.3, 0.2, 0.0])
    g = torch.Generator().manual_seed(0)
    cmp = multinomial_fit()
    assert all(
        cmp(probs, torch.multinomial(probs, 5000, True, generator=g)) is None for _ in range(20)
    )
    assert (
        cmp(probs, torch.multinomial(torch.tensor([0.45, 0.35, 0.2, 0]), 5000, True, generator=g))
        is not None
    )
    assert "probability is 0" in cmp(probs, [0, 3])
    assert "out of range" in cmp(probs, [7])
    # repeat > 1: a list of 1-element tensors, one per call
    chk = Check(
        "s", "s", lambda: [Case((probs, Generator(1)), label="r", expected=probs, repeat=3000)], cmp
    )
    assert evaluate(
        chk, lambda p, generator: torch.multinomial(p, 1, generator=generator), quiet=True
    ).passed


def test_registry_finds_checks_and_rejects_duplicates(tmp_path, monkeypatch):
    pkg = tmp_path / "fakechecks"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("CHECK_MODULES = ('a',)\n")
    body = (
        "from course_lib.checks.engine import Case, Check, exact\n"
        "CHECKS = [Check('twice', 'twice', lambda: [Case((2,), label='2', expected=4)], exact())]\n"
    )
    (pkg / "a.py").write_text(body)
    (pkg / "b.py").write_text(body)  # not named in CHECK_MODULES: never imported
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = Registry("fakechecks")
    assert reg.get("twice").exercise == "twice"
    assert "fakechecks.b" not in sys.modules
    with pytest.raises(KeyError, match="known: \\['twice'\\]"):
        reg.get("thrice")
    (pkg / "__init__.py").write_text("CHECK_MODULES = ('a', 'b')\n")
    del sys.modules["fakechecks"]
    with pytest.raises(ValueError, match="defined in both"):
        Registry("fakechecks").get("twice")
    (pkg / "__init__.py").write_text("")
    del sys.modules["fakechecks"]
    with pytest.raises(ValueError, match="must name its check modules"):
        Registry("fakechecks").get("twice")


def test_raises_case_passes_only_on_that_exception_in_and_out_of_process():
    def cases():
        return [Case((-1.0,), label="T=-1 must raise", raises="ValueError")]

    chk = Check("temp", "temp", cases, exact())

    class Negative(ValueError):
        pass

    def good(t):
        raise ValueError("T must be >= 0")

    def subclass(t):
        raise Negative("still a ValueError")

    def wrong_type(t):
        raise TypeError("no")

    def silent(t):
        return torch.tensor([0.5, 0.5])

    for fn, ok in [(good, True), (subclass, True), (wrong_type, False), (silent, False)]:
        direct = judge(chk, cases(), run_cases(chk, fn), [None])
        outcomes = [
            outcome_from_json(d) for d in json.loads(run_encoded(fn, encode_cases(cases())))
        ]
        crossed = judge(chk, cases(), outcomes, [None])
        assert direct.passed is ok and crossed.passed is ok, (
            fn.__name__,
            direct.message,
            crossed.message,
        )
    msg = judge(chk, cases(), run_cases(chk, silent), [None]).message
    assert (
        "expected your function to raise ValueError" in msg and "torch.Tensor of shape (2,)" in msg
    )
    assert (
        "expected ValueError, but your function raised TypeError"
        in judge(chk, cases(), run_cases(chk, wrong_type), [None]).message
    )
    evaluate(chk, good, quiet=True)  # a raises case needs no expected value


def test_case_fingerprints_ignore_rounding_noise_but_not_edits():
    """Stored references stay valid on another CPU (inputs made by float math differ in their last
    bits)."""
    from autograde.hidden import case_fingerprint, same_inputs

    g = torch.Generator().manual_seed(0)
    probs = torch.softmax(torch.randn(4, 1000, generator=g), dim=-1)
    stored = case_fingerprint(Case((probs, 3), label="probs"))
    # every value one ulp up: a different CPU
    noisy = torch.nextafter(probs, torch.full_like(probs, 2.0))
    assert same_inputs(stored, case_fingerprint(Case((noisy, 3), label="probs")))
    edited = probs.clone()
    edited[0, 0] *= 2  # an instructor's edit of one value
    tiny = probs.clone()
    tiny[1, 1] = 1e-9  # one value made tiny
    for other in [(edited, 3), (tiny, 3), (probs, 4), (probs.double(), 3), (probs.flip(-1), 3)]:
        assert not same_inputs(stored, case_fingerprint(Case(other, label="probs"))), other


def test_a_cost_the_text_states_is_measured_in_lines_run_and_a_removed_counter_fails():
    """Contract.cost compares Python lines executed on two cases (deterministic under any load)."""
    import sys

    from course_lib.checks.engine import Case, Check, Contract, allclose, evaluate

    def cases():
        return [
            Case((list(range(10)),), label="small", expected=1, count_steps=True),
            Case((list(range(1000)),), label="large", expected=1, count_steps=True),
        ]

    chk = Check(
        "first", "first", cases, allclose(), contract=Contract(cost=("small", "large", 2.0))
    )

    def constant(xs):
        return xs[1]

    def linear(xs):
        for i, x in enumerate(xs):
            if i == 1:
                found = x
        return found

    def hides(xs):
        sys.settrace(None)
        return linear(xs)

    assert evaluate(chk, constant, raise_on_fail=False, quiet=True).passed
    msg = evaluate(chk, linear, raise_on_fail=False, quiet=True).message
    assert "Python lines" in msg and "'small'" in msg
    assert (
        "removed the line counter" in evaluate(chk, hides, raise_on_fail=False, quiet=True).message
    )
    # the counter never outlives a call
    assert sys.gettrace() is None or sys.gettrace().__name__ != "_trace"


def test_padding_meets_a_cost_ratio_but_not_a_cap_and_honest_work_stays_far_below_the_cap():
    """An answer (bug zoo: `repetition_penalty__padded_vocab_loop`) padded a loop over the
    vocabulary with the same busy loop on every case: the ratio rule passed it.
    ``Contract.cost_cap`` bounds one case's lines outright, which no added work can lower."""
    from course_lib.checks.engine import Case, Check, Contract, allclose, evaluate

    def cases():
        return [
            Case((list(range(10)),), label="small", expected=1, count_steps=True),
            Case((list(range(1000)),), label="large", expected=1, count_steps=True),
            Case((list(range(49152)),), label="real", expected=1, count_steps=True),
        ]

    ratio_only = Check(
        "first", "first", cases, allclose(), contract=Contract(cost=("small", "large", 2.0))
    )
    capped = Check(
        "first",
        "first",
        cases,
        allclose(),
        contract=Contract(cost=("small", "large", 2.0), cost_cap=(("real", 16384),)),
    )

    def linear(xs):
        for i, x in enumerate(xs):
            if i == 1:
                found = x
        return found

    def padded(xs):
        for _ in range(200_000):
            pass
        return linear(xs)

    # honest O(L^2) work over 100 items, not over the list's length
    def quadratic_in_a_short_history(xs):
        for i in range(100):
            for j in range(i):
                pass
        return xs[1]

    # the hole padding uses
    assert evaluate(ratio_only, padded, raise_on_fail=False, quiet=True).passed
    msg = evaluate(capped, padded, raise_on_fail=False, quiet=True).message
    assert "more than 16,384" in msg and "'real'" in msg, msg
    assert evaluate(capped, quadratic_in_a_short_history, raise_on_fail=False, quiet=True).passed


def test_called_twice_allows_rounding_noise_but_not_a_different_answer():
    """A multi-threaded BLAS sums in another order from one call to the next: the 'twice' contract
    accepts float differences at rounding level (a blind honest student's fit lost its point on
    2.000000000000001 vs
    2.000000000000002) and nothing more."""
    import itertools

    import torch

    from course_lib.checks.engine import Case, Check, allclose, evaluate

    chk = Check(
        "slope", "slope", lambda: [Case((3.0,), label="x", expected=2.0)], allclose(rtol=1e-6)
    )
    noise = itertools.cycle([0.0, 4e-16])
    drift = itertools.cycle([0.0, 1e-3])
    assert evaluate(chk, lambda x: 2.0 + next(noise), raise_on_fail=False, quiet=True).passed
    assert not evaluate(chk, lambda x: 2.0 + next(drift), raise_on_fail=False, quiet=True).passed
    t = Check(
        "vec",
        "vec",
        lambda: [Case((torch.ones(3),), label="v", expected=torch.ones(3))],
        allclose(rtol=1e-5),
    )
    tick = itertools.cycle([0.0, 1e-7])
    assert evaluate(t, lambda x: x * (1 + next(tick)), raise_on_fail=False, quiet=True).passed
    ids = itertools.cycle([0, 1])
    chk_ids = Check("ids", "ids", lambda: [Case((0,), label="i", expected=0)], allclose())
    assert not evaluate(chk_ids, lambda x: next(ids), raise_on_fail=False, quiet=True).passed


def test_the_meta_case_is_as_strict_about_devices_as_a_gpu():
    """A tensor made on the CPU where the text says "on the input's device" gives the right numbers
    on a CPU and an error on a GPU. `meta` kernels accept the mix, so the meta case runs under a
    mode that refuses what CUDA refuses (a CPU tensor with dimensions beside the input's device) and
    allows what CUDA allows (CPU scalars, i.e. 0-dim tensors; copies between devices; indexing with
    CPU indices). The two that fail are the two that CUDA's rules refuse (not run on a GPU here:
    none was lent; see docs/NEXT.md)."""
    from course_lib.checks.engine import Contract

    def cases():
        x = torch.arange(6.0).reshape(2, 3)
        return [Case((x,), label="x", expected=x + torch.arange(3.0))]

    chk = Check("add_positions", "add_positions", cases, allclose(), contract=Contract(meta=True))
    honest = {
        "on the input's device": lambda x: (
            x + torch.arange(x.shape[-1], device=x.device, dtype=x.dtype)
        ),
        "a CPU scalar beside it": lambda x: (
            (x + torch.arange(x.shape[-1], device=x.device)) * torch.tensor(1.0)
        ),
        "made on the CPU, then moved": lambda x: (
            x + torch.arange(x.shape[-1], dtype=x.dtype).to(x.device)
        ),
        "indexed with CPU indices": lambda x: (
            x[:, torch.arange(x.shape[-1])] + torch.arange(x.shape[-1], device=x.device)
        ),
    }
    wrong = {
        "made on the CPU": lambda x: x + torch.arange(x.shape[-1]),
        "a CPU vector of one element": lambda x: (
            x + torch.arange(x.shape[-1], device=x.device) + torch.zeros(1)
        ),
    }
    for name, fn in honest.items():
        assert evaluate(chk, fn, raise_on_fail=False, quiet=True).passed, name
    for name, fn in wrong.items():
        r = evaluate(chk, fn, raise_on_fail=False, quiet=True)
        assert not r.passed and "same device" in r.message, name
    # the numbers alone pass: only the meta case tells them apart
    assert evaluate(
        Check("p", "p", cases, allclose()),
        wrong["made on the CPU"],
        raise_on_fail=False,
        quiet=True,
    ).passed


def test_a_result_far_larger_than_any_case_expects_is_refused_before_it_is_copied_or_compared():
    """An answer (a red team's) returned `[1.0] * 50_000_000` and a (100000, 100000) expanded view:
    one student's grading went from ~20 s to 420 s while every copy, encoding and comparison walked
    the items. Such a result now fails its case at once, by its size (counted with len/numel, never
    iterated past the cap). Control: a result of an ordinary size is compared as usual (and fails on
    its values)."""
    import torch

    from course_lib.checks.engine import MAX_RESULT_ITEMS, VISIBLE, evaluate

    chk = VISIBLE.get("repetition_rate")
    huge = evaluate(
        chk, lambda ids, n=4: [1.0] * (MAX_RESULT_ITEMS + 1), raise_on_fail=False, quiet=True
    )
    assert all("far more than any case expects" in m for _, m in huge.failures)
    view = evaluate(
        VISIBLE.get("softmax"),
        lambda z: torch.zeros(1).expand(100_000, 100_000),
        raise_on_fail=False,
        quiet=True,
    )
    assert all("far more than any case expects" in m for _, m in view.failures)
    at_cap = evaluate(chk, lambda ids, n=4: [1.0] * 1000, raise_on_fail=False, quiet=True)
    assert not any("far more" in m for _, m in at_cap.failures)


def test_an_input_written_in_place_and_restored_is_a_mutation():
    """Subtracting in place (bug zoo: `penalize_repeats__written_then_restored`) and adding back
    leaves the values equal, so comparing values cannot see it; torch's per-tensor write counter
    can. A function that only reads its input is not flagged."""

    def restore(x):
        x -= 1.0
        y = torch.softmax(x + 1.0, -1)
        x += 1.0
        return y

    def reads(x):
        return torch.softmax(x.clone().sub_(x.max()), -1)  # in-place, but on its own copy

    for fn, flagged in [(restore, True), (reads, False)]:
        outs = [
            outcome_from_json(d) for d in json.loads(run_encoded(fn, encode_cases(SOFTMAX.cases())))
        ]
        assert all(bool(o.mutated) == flagged for o in outs if o.error is None), fn.__name__
        if flagged:
            assert all("written and then restored" in m for o in outs for m in o.mutated)


def test_a_no_draw_case_fails_a_function_that_moves_its_generator():
    """At temperature 0 the text says no random number is drawn; a function that draws one anyway
    (and throws it away) returns the right ids, but a caller sharing the generator gets other
    samples afterwards. A case marked no_draw fails it, across the process boundary; the same
    function passes an unmarked case, and a function that leaves the generator alone passes both."""
    x = torch.tensor([[0.5, 2.0, -1.0]])

    def draws(logits, generator):
        torch.rand((), generator=generator)
        return logits.argmax(-1)

    def still(logits, generator):
        return logits.argmax(-1)

    for no_draw in (True, False):
        chk = Check(
            "g",
            "g",
            lambda: [
                Case((x, Generator(5)), label="t0", expected=torch.tensor([1]), no_draw=no_draw)
            ],
            exact(),
        )
        cases = chk.cases()
        for fn, fails in [(draws, no_draw), (still, False)]:
            outs = [outcome_from_json(d) for d in json.loads(run_encoded(fn, encode_cases(cases)))]
            assert outs[0].generator_moved is (fn is draws)
            result = judge(chk, cases, outs, [c.expected for c in cases])
            assert (not result.passed) is fails, (fn.__name__, no_draw, result)
            if fails:
                assert "drew from `generator`" in result.failures[0][1]
    with pytest.raises(ValueError):
        outcome_from_json({"label": "t0", "error": None, "generator_moved": 1})


def test_a_counted_case_that_comes_back_uncounted_fails_both_cost_rules():
    """The engine always counts a case that asks for it (>= 0, or -2 when the answer removed the
    counter); a white-box red team's forged outcomes sent "not counted" (-1) for every case, which
    both cost rules accepted (05: a vocabulary loop kept 20/24). Control: the same outcomes with
    counts in range pass."""
    from course_lib.checks.engine import Case, Check, Contract, allclose, judge

    def cases():
        return [
            Case((list(range(10)),), label="small", expected=1, count_steps=True),
            Case((list(range(1000)),), label="large", expected=1, count_steps=True),
            Case((list(range(49152)),), label="real", expected=1, count_steps=True),
        ]

    chk = Check(
        "first",
        "first",
        cases,
        allclose(),
        contract=Contract(cost=("small", "large", 2.0), cost_cap=(("real", 16384),)),
    )
    made = cases()

    def outcomes(steps: int) -> list:
        return [Outcome(c.label, value=1, steps=steps) for c in made]

    assert judge(chk, made, outcomes(12), [1, 1, 1]).passed
    failed = judge(chk, made, outcomes(-1), [1, 1, 1])
    assert {label for label, _ in failed.failures} == {"large", "real"}
    assert all("no count of the Python lines" in msg for _, msg in failed.failures)


def test_a_result_that_runs_code_when_used_is_refused_and_plain_results_are_not():
    """White-box red team 21 (B10): the answer returned a torch.Tensor subclass whose
    __torch_function__ computed the value (torch.softmax, or a loop over the vocabulary) the first
    time the engine touched the result, after the watch and the line counter were off. Such a result
    is now an error of its case, found without touching it; a plain tensor, a Parameter and
    containers of them are results as before."""
    import torch

    from course_lib.checks.engine import Case, _call

    ran = []

    class Later(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            ran.append(func)
            return super().__torch_function__(func, types, args, kwargs)

    case = Case((torch.tensor([1.0, 2.0]),), label="x")
    out = _call(lambda x: [x.clone().as_subclass(Later)], case, allow_mutation=False)
    assert out.error and "not plain data" in out.error and "Later" in out.error, out
    ran.clear()
    _call(lambda x: (x * 0).as_subclass(Later), case, allow_mutation=False)
    assert ran == [], ran  # refused without running its code
    for fn in (lambda x: x * 2, lambda x: torch.nn.Parameter(x * 2), lambda x: {"a": (x, [x + 1])}):
        assert _call(fn, case, allow_mutation=False).error is None


def _with_own_methods(ran: list[str]) -> tuple[type, ...]:
    """Classes whose own methods note in RAN that they ran: a list's ``__len__``/``__iter__``, an
    int's ``__eq__``, a numpy float's ``item``, ``__float__``, and a class whose metaclass has its
    own ``__hash__`` and ``__eq__``."""
    import numpy as np

    class Sneaky(list):
        def __len__(self):
            ran.append("len")
            return super().__len__()

        def __iter__(self):
            ran.append("iter")
            return super().__iter__()

    class Num(int):
        def __eq__(self, other):
            ran.append("eq")
            return True

        __hash__ = int.__hash__

    class NpNum(np.float64):
        def item(self):
            ran.append("item")
            return 1.0

    class Obj:
        def __float__(self):
            ran.append("float")
            return 1.0

    class Meta(type):
        def __hash__(cls):
            ran.append("metaclass hash")
            return 1

        def __eq__(cls, other):
            ran.append("metaclass eq")
            return False

    class Odd(metaclass=Meta):
        pass

    return Sneaky, Num, NpNum, Obj, Odd


def test_a_result_or_argument_holding_any_object_with_its_own_methods_is_refused_before_it_runs():
    """The protocols of a returned object (``__len__``, ``__iter__``, ``__eq__``, numpy's ``item``)
    run when the engine or the codec next touches it, after the call, where no watch or line counter
    is on (docs/NEXT.md, issue 37, after white-box red team 21). Every result, and every argument
    the function could fill, is walked by ``type()`` alone: any type that is not plain data is an
    error of its case, and none of its methods ran."""
    import numpy as np
    import torch

    from course_lib.checks.engine import Case, Generator, _call

    ran: list[str] = []
    Sneaky, Num, NpNum, Obj, Odd = _with_own_methods(ran)
    case = Case(([1, 2],), label="x")
    for made in (
        lambda x: Sneaky(x),
        lambda x: [Num(1)],
        lambda x: {"k": (NpNum(2.0),)},
        lambda x: Obj(),
        lambda x: {Num(3): 1},
        lambda x: {frozenset({Num(4)})},
    ):
        out = _call(made, case, allow_mutation=False)
        assert out.error and "not plain data" in out.error, out
    for filled in (lambda x: x.append(Num(5)), lambda x: x.append(Sneaky())):
        out = _call(filled, case, allow_mutation=True)
        assert out.error and "argument your function was given" in out.error, out
    # past the walk's budget
    beyond = _call(lambda x: [*range(100_001), Num(6)], case, allow_mutation=False)
    assert beyond.error and "not plain data" in beyond.error, beyond

    # a class's own hash, run if the walk ever put a type in a set or dict (it compares ids)
    for made in (lambda x: [1.0] * 1000 + [Odd()], lambda x: {"a": [[Odd()]]}, lambda x: (Odd(),)):
        out = _call(made, case, allow_mutation=False)
        assert out.error and "not plain data" in out.error, out
    assert ran == [], ran
    plain = (
        lambda x: None,
        lambda x: 1.5,
        lambda x: "s",
        lambda x: b"b",
        lambda x: (1, [2.0], {"a": {3}}),
        lambda x: np.float32(1.0),
        lambda x: np.arange(3),
        lambda x: torch.Size([2]),
        lambda x: torch.float16,
        lambda x: {1: frozenset({2})},
        lambda x: torch.int64,
    )
    for fn in plain:
        assert _call(fn, case, allow_mutation=False).error is None, fn
    # a resolved placeholder inside an argument (a generator here) is the engine's own, not the
    # function's
    seeded = Case(([Generator(3), 1],), label="g")
    assert (
        _call(lambda pair: torch.rand(2, generator=pair[0]), seeded, allow_mutation=False).error
        is None
    )


def test_work_done_as_the_answer_s_objects_die_is_watched_and_counted():
    """White-box red team 22 (C1): the answer hung an object on its input tensor (``logits.note =
    obj``); when the engine let the input go, after the watch and the line counter were off, its
    ``__del__`` ran torch.softmax (or a loop over the vocabulary) and wrote the result into the
    returned tensor. Now whatever the answer handled is let go in a tail that is watched and counted
    like the call, with the collector's cycles collected there: a ``__del__`` on an input or on the
    exception raised, a generator's ``finally`` in a cycle, an exception's ``__str__``. The value
    judged is a copy made before the tail, so a late write changes nothing."""
    import torch

    from course_lib.checks.engine import Case, call_cases

    class Later:
        def __init__(self, x, out):
            self.x, self.out = x, out

        def __del__(self):
            self.out.copy_(torch.softmax(self.x, -1))
            for _ in range(3000):
                pass

    def on_input(logits):
        out = torch.zeros_like(logits)
        logits.note = Later(logits.clone(), out)
        return out

    def in_a_cycle(logits):
        out = torch.zeros_like(logits)

        def later():
            try:
                yield
            finally:
                out.copy_(torch.softmax(logits, -1))
                for _ in range(3000):
                    pass

        g = later()
        next(g)
        box = [g]
        box.append(box)
        return out

    class Loud(Exception):
        def __str__(self):
            torch.softmax(torch.ones(2), -1)
            return "loud"

    def raising(logits):
        err = ValueError("no")
        err.note = Later(logits.clone(), torch.zeros_like(logits))
        raise err

    def raising_loud(logits):
        raise Loud()

    x = torch.tensor([[1.0, 2.0, 3.0]])
    for fn in (on_input, in_a_cycle, raising, raising_loud):
        case = Case((x,), label="c", count_steps=True)
        [out] = call_cases(fn, [case], forbidden=("torch.softmax",))
        if out.error is None:
            # the late write is not judged
            assert torch.equal(out.value, torch.zeros_like(x)), (fn.__name__, out.value)
        assert "torch.softmax" in " ".join(out.forbidden) or out.error, (fn.__name__, out)
        seen = call_cases(
            fn,
            [Case((x,), label="c", count_steps=True), Case((x,), label="d")],
            forbidden=("torch.softmax",),
        )
        assert any(o.forbidden for o in seen) or all(o.error for o in seen), (fn.__name__, seen)
        if fn is not raising_loud:
            assert out.steps >= 3000, (fn.__name__, out.steps)
    assert "loud" in out.error


def test_an_answer_that_switches_the_collector_on_is_caught_by_the_counter_and_the_watch():
    """White-box red team 25 (E10/E11): the engine keeps the collector off for a call; an answer
    that switched it on again (gc reached as torch.cuda.graphs.gc) with a threshold of 1 made the
    next allocation inside the line counter's or the watch's callback collect a cycle whose
    __del__ looped over the vocabulary (or used a forbidden class) where CPython pauses tracing:
    a 49,152-step loop counted as 14 lines. Now the counter's case is an error and the watch records
    a rule as soon as either callback finds the collector on. Control: the same answer without the
    switch: no error, no rule, and its finalizer's loop counted in the tail."""
    import gc

    import torch

    from course_lib.checks.engine import Case, call_cases
    from course_lib.checks.trace import COLLECTOR_RULE

    def answer(x, switch=True):
        box = {}

        class Later:
            def __del__(self):
                box["n"] = sum(1 for _ in range(50_000))

        job = Later()
        job.me = job
        del job
        if switch:
            gc.set_threshold(1)
            gc.enable()
        y = x * 2
        gc.set_threshold(700)
        return y

    x = torch.ones(3)
    try:
        [counted] = call_cases(answer, [Case((x,), label="c", count_steps=True)])
        assert counted.error and "garbage collector" in counted.error, counted
        [watched] = call_cases(answer, [Case((x,), label="w")], forbidden=("torch.softmax",))
        assert COLLECTOR_RULE in watched.forbidden, watched
        [plain] = call_cases(
            lambda x: answer(x, switch=False),
            [Case((x,), label="c", count_steps=True)],
            forbidden=("torch.softmax",),
        )
        # the cycle is collected in the tail, counted (test above)
        assert plain.error is None and plain.forbidden == [] and plain.steps >= 50_000, plain
    finally:
        gc.set_threshold(700)
        gc.enable()
    assert gc.isenabled()


def test_an_honest_call_keeps_its_count_and_its_value_through_the_tail():
    """The tail adds a few of the engine's lines to a count, not a measure of the answer: an honest
    vectorised call is counted as before (within a few lines) and its value is the same tensor's
    copy, not shared with it."""
    import torch

    from course_lib.checks.engine import Case, call_cases

    kept = []

    def honest(x):
        y = x.softmax(-1) if False else (x - x.max()).exp()
        kept.append(y)
        return y

    [out] = call_cases(honest, [Case((torch.tensor([1.0, 2.0]),), label="h", count_steps=True)])
    assert out.error is None and 0 < out.steps < 50, out
    assert torch.equal(out.value, kept[0]) and out.value.data_ptr() != kept[0].data_ptr()


def test_an_answer_that_switches_the_collector_on_still_has_its_cycles_collected_in_the_tail():
    """gc is an allowed import: an answer that calls gc.enable() must not get its cycle collected by
    an automatic collection while the engine observes the call (unwatched); the engine switches the
    collector off again as the call returns, and the finalizer runs in the tail, watched."""
    import gc

    import torch

    from course_lib.checks.engine import Case, call_cases

    def cyclic(logits):
        gc.enable()
        out = torch.zeros_like(logits)

        class Later:
            def __del__(self):
                torch.softmax(logits, -1)

        box = [Later()]
        box.append(box)
        return out

    before = gc.isenabled()
    [out] = call_cases(cyclic, [Case((torch.ones(1, 3),), label="c")], forbidden=("torch.softmax",))
    assert out.error is None and out.forbidden, out
    assert gc.isenabled() == before


def test_an_answer_giving_torchs_tensor_class_new_methods_fails_and_the_class_is_put_back():
    """``type(logits).detach = f`` in an answer passes every text reading (the class is reached
    through a call), and the engine's work after the call (copying, comparing and encoding the
    result) calls tensor methods where no watch or counter is on: f would run there, unwatched, and
    could rewrite the result. The engine keeps torch's tensor classes as they were at its import; a
    change is an error of the case, and the class is put back before the engine touches a tensor
    again (the replacement never runs)."""
    import torch

    from course_lib.checks.engine import Case, call_cases

    ran = []

    def patches(logits):
        T = type(logits)

        def detach(self):
            ran.append("detach")
            return torch.softmax(self, -1)

        T.detach = detach
        T.extra = 1
        return logits * 0

    x = torch.tensor([[1.0, 2.0]])
    before = dict(vars(torch.Tensor))
    out = call_cases(
        patches, [Case((x,), label="a"), Case((x,), label="b")], forbidden=("torch.softmax",)
    )
    assert all(
        o.error and "changed torch's tensor class" in o.error and "Tensor.detach" in o.error
        for o in out
    ), out
    assert ran == [] and dict(vars(torch.Tensor)) == before
    torch.Tensor.clone = lambda self: self  # as a cell would, before the checks
    try:
        [first, second] = call_cases(
            lambda t: t * 2, [Case((x,), label="a"), Case((x,), label="b")]
        )
    finally:
        vars(torch.Tensor).get("clone") and delattr(torch.Tensor, "clone")
    assert first.error and "before this call" in first.error and second.error is None, (
        first,
        second,
    )
    assert dict(vars(torch.Tensor)) == before


def test_the_first_copy_of_a_tensor_in_a_fresh_process_is_no_change_to_its_class():
    """copyreg caches ``__slotnames__`` on torch.Tensor the first time a process pickles a tensor
    (torch.save, as the references' cache does): after the engine had taken the class as pristine,
    every later case of that process failed as "torch's tensor class was changed" (test_adversarial
    in a fresh-clone run, session 21). Run in a fresh process, as a grading process is."""
    import subprocess
    import sys

    probe = """
import torch
from course_lib.checks.engine import Case, call_cases
import io, pickle
assert "__slotnames__" not in vars(torch.Tensor)
pickle.dumps(torch.ones(1)); torch.save(torch.ones(1), io.BytesIO())  # as the references' cache does
assert "__slotnames__" in vars(torch.Tensor)  # the control: the first pickle caches it
[out] = call_cases(lambda t: t * 2, [Case((torch.ones(2),), label="a")])
assert out.error is None, out.error
print("ok")
"""  # noqa: E501
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=300
    )
    assert done.stdout.strip() == "ok", done.stdout + done.stderr
