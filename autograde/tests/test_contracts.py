"""Contracts applied by the engine (issue 16, item 1), forbidden calls (item 5), messages (item 6),
the mutator.

Every verdict is taken the way the grader takes it: student code runs through ``run_encoded`` (JSON
out), ``outcome_from_json`` reads the facts back, ``judge`` decides outside. Cost: < 1 s, no model.
"""

from __future__ import annotations

import json
import linecache

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from autograde.inside.codec import encode_cases, outcome_from_json
from autograde.inside.payload import run_encoded
from autograde.mutants import mutate
from course_lib.checks.engine import (
    Case,
    Check,
    Contract,
    Generator,
    allclose,
    judge,
)
from course_lib.checks.logits_softmax import SOFTMAX_FORBIDDEN
from course_lib.checks.rules import function_violations, notebook_violations, violations


def _verdict(check: Check, fn) -> list[tuple[str, str]]:
    cases = check.cases()
    outs = [
        outcome_from_json(d)
        for d in json.loads(run_encoded(fn, encode_cases(cases, check.allow_mutation)))
    ]
    return judge(check, cases, outs, [c.expected for c in cases]).failures


def _double_check(**contract) -> Check:
    x = torch.tensor([1.0, -2.0, 3.0])
    return Check(
        "double",
        "double",
        lambda: [Case((x,), label="x", expected=2 * x)],
        allclose(),
        contract=Contract(**contract),
    )


def test_returning_the_input_or_a_view_of_it_fails_and_a_new_tensor_passes():
    chk = _double_check()
    # in place: mutated and aliased
    assert _verdict(chk, lambda x: x.mul_(2)) != []
    view = _verdict(
        Check(
            "same",
            "same",
            lambda: [Case((torch.ones(3),), label="x", expected=torch.ones(3))],
            allclose(),
        ),
        lambda x: x[:],
    )
    assert view and "shares memory with argument 1" in view[0][1]
    assert _verdict(chk, lambda x: 2 * x) == []


def test_a_buffer_kept_between_calls_is_caught_by_the_twice_case():
    buf = torch.zeros(3)

    def cached(x):
        buf.copy_(2 * x)
        return buf

    failures = _verdict(_double_check(), cached)
    assert [label for label, _ in failures] == ["x [called twice]"]
    assert "an earlier call" in failures[0][1]


def test_a_sampler_on_the_global_rng_fails_and_one_on_its_generator_passes():
    p = torch.tensor([0.25, 0.75])
    chk = Check(
        "draw",
        "draw",
        lambda: [Case((p, Generator(3)), label="p", expected=None)],
        lambda e, g, c: None,
        contract=Contract(generator=True),
    )
    glob = _verdict(chk, lambda p, g: torch.multinomial(p, 1))
    assert glob and "global generator" in glob[0][1]
    assert _verdict(chk, lambda p, g: torch.multinomial(p, 1, generator=g)) == []


def test_the_same_seed_must_give_the_same_draws():
    p = torch.tensor([0.5, 0.5])
    chk = Check(
        "draw",
        "draw",
        lambda: [Case((p, Generator(3)), label="p", expected=None)],
        lambda e, g, c: None,
        contract=Contract(generator=True),
    )
    state = {"n": 0}

    def reseeds_itself(p, g):  # ignores the caller's seed: a fresh stream per call
        state["n"] += 1
        return torch.multinomial(
            p, 16, replacement=True, generator=torch.Generator().manual_seed(state["n"])
        )

    failures = _verdict(chk, reseeds_itself)
    assert failures and "returned different results" in failures[0][1]


def test_tensors_made_on_the_cpu_whatever_the_input_fail_the_meta_case():
    x = torch.tensor([[1.0, 2.0]])
    chk = Check(
        "shift",
        "shift",
        lambda: [Case((x,), label="x", expected=x + 1)],
        allclose(),
        contract=Contract(meta=True),
    )
    bad = _verdict(
        chk,
        lambda x: (
            x + torch.ones(x.shape).to(x.device) if x.device.type != "meta" else torch.ones(x.shape)
        ),
    )
    assert bad and "meta" in bad[0][1] and bad[0][0].endswith("[inputs on the meta device]")
    assert _verdict(chk, lambda x: x + torch.ones_like(x)) == []
    # an operator with no meta kernel (nonzero, unique, .item()) says nothing about devices: a blind
    # class's honest penalize_repeats answers lost a hidden point here; a CPU tensor mixed with meta
    # ones still fails
    assert _verdict(chk, lambda x: x + torch.ones_like(x) + 0 * torch.nonzero(x > 0).numel()) == []
    assert _verdict(chk, lambda x: x + x.new_ones(()) * float(x.sum().item() > -1)) == []
    mixed = _verdict(chk, lambda x: torch.where(x > 0, x + 1, torch.zeros(x.shape)))
    assert mixed and mixed[0][0].endswith("[inputs on the meta device]"), mixed


def test_a_copy_to_the_cpu_leaves_the_meta_case_able_to_see_what_is_built_from_it():
    # bug zoo `repetition_penalty__mask_on_cpu`: `.cpu()` of a meta tensor raised "no data", so the
    # case said nothing and the mask built on the CPU from the copy passed; on a GPU the copy works
    # and the mask fails beside the logits
    x = torch.tensor([[1.0, 2.0, -1.0]])
    chk = Check(
        "shift",
        "shift",
        lambda: [Case((x,), label="x", expected=x + 1)],
        allclose(),
        contract=Contract(meta=True),
    )
    cpu_mask = _verdict(chk, lambda x: torch.where(x.cpu() > -5, x + 1, x))
    assert (
        cpu_mask
        and cpu_mask[0][0].endswith("[inputs on the meta device]")
        and "two devices" in cpu_mask[0][1]
    )
    # the copy is honest when what is built from it goes back to the inputs' device
    assert _verdict(chk, lambda x: torch.where((x.cpu() > -5).to(x.device), x + 1, x)) == []
    assert _verdict(chk, lambda x: x + torch.ones(x.shape, dtype=x.cpu().dtype).to(x.device)) == []
    # Python work on the copy's zeros there (a division by a count of 0) says nothing about devices
    assert _verdict(chk, lambda x: x + 1 + 0 * (1 // int((x.cpu() != 0).sum()))) == []


def test_forbidden_calls_are_found_through_aliases():
    rules = ("torch.softmax", "torch.nn.functional.softmax", "Tensor.softmax")
    found = lambda src: sorted({v.rule for v in violations(src, rules)})
    assert found("import torch as t\ndef f(x):\n    return t.softmax(x, -1)") == ["torch.softmax"]
    assert found(
        "from torch.nn import functional as F\ndef f(x):\n    return F.softmax(x, -1)"
    ) == ["torch.nn.functional.softmax"]
    assert found("import torch.nn.functional as F\ndef f(x):\n    return F.softmax(x, -1)") == [
        "torch.nn.functional.softmax"
    ]
    assert found("from torch import softmax as sm\ndef f(x):\n    return sm(x, -1)") == [
        "torch.softmax"
    ]
    assert found("import torch\ndef f(x):\n    s = torch.softmax\n    return s(x, -1)") == [
        "torch.softmax"
    ]
    assert found("import torch\ndef f(x):\n    return getattr(torch, 'softmax')(x, -1)") == [
        "torch.softmax"
    ]
    assert found("def f(x):\n    return x.softmax(-1)") == ["Tensor.softmax"]
    assert (
        found(
            "import torch\ndef f(x):\n    e = torch.exp(x - x.amax(-1, keepdim=True))\n    return "
            "e / e.sum(-1)"
        )
        == []
    )
    v = violations("import torch\n\ndef f(x):\n    return torch.softmax(x, -1)\n", rules)[0]
    assert (v.line, v.code) == (4, "return torch.softmax(x, -1)")


SOFTMAX_RULES = ("torch.softmax", "torch.nn.functional.softmax", "Tensor.softmax")
# how a notebook can bring a forbidden call into reach (each binds `use` so that `use(x)` is a
# softmax, or not)
IMPORTS = {
    "plain": ("import torch", "torch.softmax(x, -1)"),
    "module alias": ("import torch as t", "t.softmax(x, -1)"),
    "functional": ("import torch.nn.functional as F", "F.softmax(x, -1)"),
    "from import": ("from torch.nn import functional as FF", "FF.softmax(x, -1)"),
    "name alias": ("from torch import softmax as sm", "sm(x, -1)"),
    "assigned": ("import torch\nsoft = torch.softmax", "soft(x, -1)"),
    "getattr": ("import torch", "getattr(torch, 'softmax')(x, -1)"),
    "method": ("import torch", "x.softmax(-1)"),
    "allowed": (
        "import torch",
        "torch.exp(x - x.amax(-1, keepdim=True)) / "
        "torch.exp(x - x.amax(-1, keepdim=True)).sum(-1, keepdim=True)",
    ),
    # what a blind red team used (session 7): the same kernels under names no list can hold ...
    "private": ("import torch", "torch._softmax(x, -1, False)"),
    "aten op": ("import torch", "torch.ops.aten._softmax(x, -1, False)"),
    "distribution": ("from torch import distributions as D", "D.Categorical(logits=x).probs"),
    "logcumsumexp": ("import torch", "torch.exp(x - torch.logcumsumexp(x, -1)[..., -1:])"),
    "aliased getattr": ("import torch\ng = getattr", "g(torch, 'softmax')(x, -1)"),
    "__dict__": ("import torch", "torch.__dict__['softmax'](x, -1)"),
    "eval": ("import torch", "eval('torch.softmax')(x, -1)"),
    "sys.modules": ("import sys", "sys.modules['torch'].softmax(x, -1)"),
    # what a second blind red team used (session 8): bindings other than `name = dotted.name`
    "dict": ("import torch\nOPS = {'sm': torch.softmax}", "OPS['sm'](x, -1)"),
    "partial": ("import torch, functools\nsm = functools.partial(torch.softmax, dim=-1)", "sm(x)"),
    "walrus": ("import torch\n(sw := torch.softmax)", "sw(x, -1)"),
    "for target": ("import torch\nfor sf in [torch.softmax]:\n    pass", "sf(x, -1)"),
    "with target": (
        "import torch, contextlib\nwith contextlib.nullcontext(torch.softmax) as ws:\n    pass",
        "ws(x, -1)",
    ),
    "unpacked": ("import torch\nta, tb = torch.exp, torch.softmax", "tb(x, -1)"),
    "annotated": ("import torch\nan: object = torch.softmax", "an(x, -1)"),
    "dict of a helper": (
        "import torch\ndef hh(z):\n    return torch.softmax(z, -1)\nHH = {'f': hh}",
        "HH['f'](x)",
    ),
    # ... and honest code that looks a little like them
    "allowed getattr": (
        "import torch",
        "getattr(torch, 'exp')(x - x.amax(-1, keepdim=True)) / "
        "torch.exp(x - x.amax(-1, keepdim=True)).sum(-1, keepdim=True)",
    ),
    "allowed dunder": (
        "import torch",
        "(x - x.amax(-1, keepdim=True)).exp() / (x - x.amax(-1, keepdim=True))"
        ".exp().sum(-1, keepdim=True) * (1 if torch.__version__ else 0)",
    ),
    # kept at module level, never used by the answer: the text reading (not the live one) reads what
    # a notebook keeps as a finding, since it cannot tell what reaches the answer (white-box red
    # team 23)
    "kept unpacked": (
        "import torch\nta, tb = torch.exp, torch.softmax",
        "ta(x - x.amax(-1, keepdim=True)) / ta(x - x.amax(-1, keepdim=True)).sum(-1, keepdim=True)",
    ),
    "allowed scratch": (
        "import torch\nref = torch.softmax(torch.zeros(3), -1)\nsmx = None",
        "(lambda smx: smx / smx.sum(-1, keepdim=True))(torch.exp(x - x.amax(-1, keepdim=True)))",
    ),
}


def _cells(how: str, depth: int, split: bool) -> list[str]:
    """A notebook's answer cells: imports, then `depth` helpers each calling the next, the answer
    calling the first."""
    imports, use = IMPORTS[how]
    helpers = [
        f"def helper{i}(x):\n    return {use if i == depth - 1 else f'helper{i + 1}(x)'}\n"
        for i in range(depth)
    ]
    answer = f"def answer(x):\n    return {'helper0(x)' if depth else use}\n"
    cells = [imports + "\n"] + helpers + [answer]
    return cells if split else ["\n".join(cells)]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    how=st.sampled_from(sorted(IMPORTS)),
    depth=st.integers(0, 3),
    split=st.booleans(),
    decoy=st.booleans(),
)
def test_the_grader_reads_from_text_what_the_notebook_finds_on_live_functions(
    how, depth, split, decoy
):
    """Two readings of one answer (issue 16 item 5): the notebook's (live function, its globals) and
    the grader's (the cells' text, no objects) find the same rules, through aliases and helpers;
    both agree with the truth the generator knows (a softmax call or not), and an unrelated function
    using softmax is no finding (`decoy`)."""
    cells = _cells(how, depth, split)
    if decoy:
        cells.append("import torch\ndef unrelated(x):\n    return torch.softmax(x, -1)\n")
    namespace: dict = {}
    # as a notebook runs its cells, each compiled under its own name
    for i, cell in enumerate(cells):
        code = compile(cell, f"<cell{i}>", "exec")
        linecache.cache[f"<cell{i}>"] = (len(cell), None, cell.splitlines(True), f"<cell{i}>")
        namespace["__name__"] = "__main__"
        exec(code, namespace)
    live = {v.rule for v in function_violations(namespace["answer"], SOFTMAX_FORBIDDEN)}
    text = {v.rule for v in notebook_violations(cells, "answer", SOFTMAX_FORBIDDEN)}
    if how.startswith("kept"):
        assert not live and text  # the text reading is the stricter one here, on purpose
    else:
        assert live == text
    assert bool(text) == (not how.startswith("allowed")), text
    x = torch.randn(3, 5)
    # the generated code is real
    assert torch.allclose(namespace["answer"](x), torch.softmax(x, -1), atol=1e-6)


def test_a_forbidden_call_in_a_helper_is_named_with_the_helper():
    cells = [
        "import torch\n",
        "%matplotlib inline\ndef norm(z):\n    return torch.softmax(z, -1)\n",
        "def softmax(x):\n    return norm(x)\n",
        "def softmax(x):\n    return x.exp() / x.exp().sum()\n",
    ]
    # the last definition counts
    assert notebook_violations(cells, "softmax", SOFTMAX_RULES) == []
    found = notebook_violations(cells[:3], "softmax", SOFTMAX_RULES)
    assert [v.message() for v in found] == [
        "line 3 of norm(): `return torch.softmax(z, -1)` uses torch.softmax, which this exercise "
        "asks you not to use"
    ]
    # a cell that does not parse cannot be read: the rule is not met (the kernel's SyntaxError fails
    # it too)
    assert [
        v.line for v in notebook_violations(["def softmax(x:\n"], "softmax", SOFTMAX_RULES)
    ] == [0]
    # IPython's own syntax is read as IPython runs it, so an answer cannot hide in a cell with a
    # shell escape
    shell = ["import torch\n", "files = !ls\ndef softmax(x):\n    return torch.softmax(x, -1)\n"]
    assert [v.rule for v in notebook_violations(shell, "softmax", SOFTMAX_RULES)] == [
        "torch.softmax"
    ]


def test_course_lib_steps_imported_as_the_answer_are_found_by_both_readings():
    """course_lib.generate.greedy is argmax (notebook 04 uses it): importing it as 03's `greedy` is
    no answer."""
    import course_lib.generate

    rules = ("course_lib.generate.greedy",)
    forms = [
        "from course_lib.generate import greedy\n",
        "import course_lib.generate as G\ngreedy = G.greedy\n",
        "from course_lib import generate\ndef greedy(x):\n    return generate.greedy(x)\n",
        "from course_lib.generate import greedy as g\ndef greedy(x):\n    return g(x)\n",
    ]
    for i, cell in enumerate(forms):
        name = f"<greedy{i}>"
        linecache.cache[name] = (len(cell), None, cell.splitlines(True), name)
        namespace = {"__name__": "__main__"}
        exec(compile(cell, name, "exec"), namespace)
        assert {v.rule for v in notebook_violations([cell], "greedy", rules)} == set(rules), cell
        assert {v.rule for v in function_violations(namespace["greedy"], rules)} == set(rules), cell
    own = "def greedy(x):\n    return x.argmax(-1)\n"
    # redefined after: the last one counts
    assert notebook_violations([forms[0], own], "greedy", rules) == []
    assert course_lib.generate.greedy(torch.tensor([[0.0, 2.0, 2.0]])).tolist() == [1]


def test_numbers_print_with_enough_digits_to_differ():
    msg = allclose(rtol=1e-9, atol=0)(1.7118140e-06, 1.7118145e-06)  # equal to 6 digits
    assert msg is not None and "expected 1.7118140e-06" not in msg
    assert "1.711814e-06" in msg and "1.7118145e-06" in msg


def test_a_diagnosis_is_named_only_when_exactly_one_mistake_reproduces_the_value():
    from course_lib.checks.generation_loop import int_exact

    # 8 query heads per KV head: 8x is ambiguous
    gqa = Case((80, 64, 8, 128, 8192, 2), label="70B")
    exp = 2 * 80 * 8 * 128 * 8192 * 2
    assert int_exact(exp, exp * 8, gqa) == f"expected {exp:,} bytes, got {exp * 8:,}"
    mha = Case((12, 12, 12, 64, 1024, 4), label="GPT-2")
    exp = 2 * 12 * 12 * 64 * 1024 * 4
    assert "bits" in int_exact(exp, exp * 8, mha)
    assert "(" not in int_exact(exp, exp + 1, mha)  # no ratio, no guess


def test_mutants_are_single_changes_with_stable_keys():
    src = 'def f(a, b):\n    """doc"""\n    if a < b:\n        return a + b\n    return -a\n'
    ms = mutate(src, "f")
    keys = [m.key for m in ms]
    assert len(keys) == len(set(keys)) == len({m.source for m in ms})
    assert "f L3: Lt -> LtE: `a < b` -> `a <= b`" in keys
    assert "f L4: Add -> Sub: `a + b` -> `a - b`" in keys
    assert any(k.startswith("f L3: negate if condition") for k in keys)
    assert not any("doc" in k for k in keys)  # docstrings are not mutated
    assert [m.key for m in mutate(src, "f")] == keys


def test_failures_show_the_smallest_input_first_with_the_call_written_out():
    from course_lib.checks.engine import evaluate

    cases = lambda: [
        Case((torch.arange(40.0),), label="big", expected=torch.arange(40.0)),
        Case((torch.tensor([1.0, 2.0]),), label="small", expected=torch.tensor([1.0, 2.0])),
    ]
    r = evaluate(
        Check("ident", "ident", cases, allclose(), contract=Contract(twice=False)),
        lambda x: x * 1.5,
        raise_on_fail=False,
        quiet=True,
    )
    assert [label for label, _ in r.failures] == ["small", "big"]
    assert r.failures[0][1].endswith("input: (tensor([1.0, 2.0], dtype=float32))")
    assert r.failures[1][1].endswith("input: (<tensor of shape (40,), float32>)")


def test_answers_the_text_cannot_show_break_the_rule_and_objects_are_read_through_their_class():
    """An answer bound by exec of a string (a red team's) has no text to read: the grader's reading
    fails it. A callable object's class is read like a function, by both readings."""
    hidden = ["import torch\nexec('def softmax(x):\\n    return torch.softmax(x, -1)')\n"]
    assert [v.line for v in notebook_violations(hidden, "softmax", SOFTMAX_FORBIDDEN)] == [0]
    assert (
        "cannot read it" in notebook_violations(hidden, "softmax", SOFTMAX_FORBIDDEN)[0].message()
    )
    obj = (
        "import torch\nclass Soft:\n    def __call__(self, x):\n        return torch.softmax(x, "
        "-1)\n\n"
        "softmax = Soft()\n"
    )
    name = "<object-answer>"
    linecache.cache[name] = (len(obj), None, obj.splitlines(True), name)
    namespace = {"__name__": "__main__"}
    exec(compile(obj, name, "exec"), namespace)
    assert {v.rule for v in notebook_violations([obj], "softmax", SOFTMAX_FORBIDDEN)} == {
        "torch.softmax"
    }
    # live: read through the methods of the object's class (their source is in the notebook's cells)
    assert {v.rule for v in function_violations(namespace["softmax"], SOFTMAX_FORBIDDEN)} == {
        "torch.softmax"
    }


def test_every_answer_may_not_read_the_checks_but_honest_dynamic_code_passes():
    """The grader sets `course_lib.checks.*` on every answer (verify.rules_of): a lookup of the
    visible cases' expected values (a red team's, 5 of 26 points) breaks it however the package is
    reached; honest code that uses getattr with a computed name is fine where the exercise names no
    calls."""
    universal = ("course_lib.checks.*",)
    lookups = [
        "from course_lib.checks import VISIBLE\ndef f(x):\n    return "
        "VISIBLE.get('softmax').cases()[0].expected\n",
        "import course_lib.checks.engine as E\ndef f(x):\n    return E.VISIBLE\n",
        "def f(x):\n    from course_lib import checks\n    return checks.VISIBLE\n",
        "import sys\ndef f(x):\n    return sys.modules['course_lib.' + 'checks']\n",
        "import importlib\ndef f(x):\n    return importlib.import_module('course_lib.' + "
        "'checks')\n",
        "import course_lib\ndef f(x):\n    return course_lib.__dict__['che' + 'cks']\n",
        "def f(x):\n    return get_ipython().ev('__import__(\"course_lib.checks\")')\n",
        "from IPython import get_ipython as g\ndef f(x):\n    return g().user_ns\n",
    ]
    for src in lookups:
        assert notebook_violations([src], "f", universal), src
    honest = [
        "import torch\ndef f(x, dtype='float16'):\n    return torch.finfo(getattr(torch, "
        "dtype)).bits * x\n",
        "from course_lib.generate import greedy\ndef f(x):\n    return greedy(x)\n",
    ]
    for src in honest:
        assert notebook_violations([src], "f", universal) == [], src
    msg = notebook_violations([lookups[0]], "f", universal)[0].message()
    assert "course_lib.checks (the checks, their cases and expected values)" in msg, msg


FRAGMENTS = [
    "import torch",
    "import torch as t",
    "from torch import softmax as s",
    "def softmax(x):",
    "    return",
    " torch.softmax(x, -1)",
    " s(x)",
    "OPS = {'a': torch.softmax}",
    "(w := torch.exp)",
    "for q in [s]:",
    "    pass",
    "with open('f') as fh:",
    "class K:",
    "    def __call__(self, x):",
    "lambda x: x",
    "%time",
    "!ls",
    "x = !ls",
    "getattr(torch, n)",
    "vars(torch)",
    "a, b = b, a",
    "a: int = 1",
    "global g",
    "del x",
    "try:",
    "except Exception:",
    "finally:",
    "if x:",
    "else:",
    "@functools.cache",
    "async def softmax(x):",
    "    await x",
    "yield",
    "softmax = softmax",
    "softmax = lambda x: softmax(x)",
    "\\",
    "(",
    ")",
    "[",
    "]",
    '"""',
    "'",
    "#",
    "\t",
    "\n",
    "    ",
    ";",
    ":",
    ",",
    "=",
    ".",
    "*",
    "**",
    "__dict__",
    "__import__('os')",
]
CODE = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6)), max_size=40).map(
    " ".join
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(cells=st.lists(st.one_of(CODE, CODE.map(lambda c: c.replace(" ", "\n"))), max_size=4))
def test_the_rule_reader_never_raises_on_any_text(cells):
    """The grader's reading of rules runs on a student's text (autograde.intake): fuzzed with
    code-like text, it returns findings or nothing, never an exception (where it did, intake fails
    the rule closed)."""
    found = notebook_violations(cells, "softmax", list(SOFTMAX_FORBIDDEN) + ["course_lib.checks.*"])
    assert all(isinstance(v.line, int) and isinstance(v.message(), str) for v in found)


def test_switching_the_run_time_checks_off_and_on_again_breaks_a_rule_by_text():
    """The watch shares the student's process: code that removes its hook and puts it back before
    returning is unseen at run time, so the reading of the text refuses every way to reach the hooks
    by name."""
    from course_lib.checks.rules import violations

    ways = [
        "import sys\ndef f(x):\n    old = sys.getprofile()\n    sys.setprofile(None)\n    y = x\n "
        "   sys.setprofile(old)\n    return y\n",
        "from sys import settrace as st\ndef f(x):\n    st(None)\n    return x\n",
        "import threading\ndef f(x):\n    threading.setprofile(None)\n    return x\n",
        "import sys\ndef f(x):\n    sys.monitoring.set_events(1, 0)\n    return x\n",
        "from torch.utils._python_dispatch import _pop_mode\ndef f(x):\n    _pop_mode()\n    "
        "return x\n",
    ]
    for src in ways:
        found = violations(src, ["course_lib.checks.*"])
        assert any("switches off the checks" in v.message() for v in found), src
    honest = (
        "import sys\ndef f(x):\n    print(sys.version_info, sys.getprofile() is None)\n    "
        "return x\n"
    )
    assert violations(honest, ["course_lib.checks.*"]) == []


def test_code_run_from_a_string_anywhere_in_the_notebook_breaks_the_rule():
    """A notebook (a red team's) whose cell of its own ran exec(base64.b64decode(...)), which
    defined a softmax that switched the watch off; the answer only called it by a name no text
    binds. The grader's reading now refuses code run from a string anywhere in the notebook, and the
    notebook's live reading refuses a function that has no text (made from a string). Controls: the
    same notebook without that cell has nothing to read as a rule break (the name is simply
    unbound), and an honest notebook that uses neither is clean."""
    import base64

    payload = base64.b64encode(b"import torch\n_SMX = lambda z: torch.softmax(z, -1)\n").decode()
    cells = [
        "import base64\nimport torch\n",
        f"exec(base64.b64decode('{payload}'))\n",
        "def softmax(logits):\n    return _SMX(logits)\n",
    ]
    text = notebook_violations(cells, "softmax", SOFTMAX_FORBIDDEN)
    assert [v.function for v in text] == ["code cell 2"] and "exec()" in text[0].rule
    assert "line 1 of code cell 2: `exec(" in text[0].message()
    assert notebook_violations([cells[0], cells[2]], "softmax", SOFTMAX_FORBIDDEN) == []
    namespace: dict = {"__name__": "__main__"}
    for i, cell in enumerate(cells):
        code = compile(cell, f"<cell{i}>", "exec")
        linecache.cache[f"<cell{i}>"] = (len(cell), None, cell.splitlines(True), f"<cell{i}>")
        exec(code, namespace)
    live = function_violations(namespace["softmax"], SOFTMAX_FORBIDDEN)
    assert [v.code for v in live] == ["<lambda>"] and "made from a string" in live[0].rule
    honest = [
        "import torch\n",
        "def softmax(logits):\n    z = (logits - logits.amax(-1, keepdim=True)).exp()\n"
        "    return z / z.sum(-1, keepdim=True)\n",
    ]
    assert notebook_violations(honest, "softmax", SOFTMAX_FORBIDDEN) == []


def test_an_answer_rebound_to_a_function_without_text_breaks_the_rule():
    """White-box red team 21 (B1, B4): the answer's text is wrong but harmless, and a cell rebinds
    its name at run time to a function made from a string (or run from a file it then deletes). The
    live reading refuses the answer itself when it has no text, as it refuses such helpers. Control:
    the answer defined in a cell is clean."""
    namespace: dict = {"__name__": "__main__"}
    exec(
        compile("import torch\nsoftmax = lambda z: torch.softmax(z, -1)\n", "<string>", "exec"),
        namespace,
    )
    live = function_violations(namespace["softmax"], SOFTMAX_FORBIDDEN)
    assert [v.code for v in live] == ["<lambda>"] and "made from a string" in live[0].rule
    cell = "def softmax(logits):\n    z = logits.exp()\n    return z / z.sum(-1, keepdim=True)\n"
    linecache.cache["<cell9>"] = (len(cell), None, cell.splitlines(True), "<cell9>")
    exec(compile(cell, "<cell9>", "exec"), namespace)
    assert function_violations(namespace["softmax"], SOFTMAX_FORBIDDEN) == []


def test_torchscript_compiled_from_a_string_breaks_the_rule():
    """scaled_dot_product_attention run inside TorchScript compiled from a string
    (`torch.jit.CompilationUnit(SRC)`): the run-time watch saw the kernel, the text reading did not.
    Now the reading refuses it like exec. Control: the notebook without that cell is clean."""
    cells = [
        "import torch\n",
        "SRC = 'def f(x):\\n    return torch.softmax(x, -1)\\n'\ncu = "
        "torch.jit.CompilationUnit(SRC)\n",
        "def softmax(logits):\n    return cu.f(logits)\n",
    ]
    text = notebook_violations(cells, "softmax", SOFTMAX_FORBIDDEN)
    assert [v.function for v in text] == ["code cell 2"] and "CompilationUnit" in text[0].rule
    assert notebook_violations([cells[0], cells[2]], "softmax", SOFTMAX_FORBIDDEN) == []


def test_course_libs_own_loop_is_not_an_answer_to_generate_loop():
    """Reader 10 passed 04's generate_loop visibly (12/12) with course_lib's own `generate` wrapped
    in a few lines: 04's exercises 1 and 4 now forbid the loop (`generate`, `stream` and their
    helpers), as 03 forbids the steps. Control: the reference loop, which takes course_lib's
    `greedy` as its default step, breaks no rule."""
    from autograde.course import Course
    from autograde.references import reference_namespace
    from course_lib.checks.engine import VISIBLE, evaluate
    from course_lib.generate import generate, greedy

    def wrapped(
        model,
        prompts,
        max_new_tokens,
        step=greedy,
        eos_id=None,
        stop_sequences=(),
        tokenizer=None,
        generator=None,
    ):
        outs = generate(
            model,
            prompts,
            max_new_tokens,
            step=step,
            generator=generator,
            use_cache=False,
            stop_tokens=() if eos_id is None else (eos_id,),
            progress=False,
        )
        return [
            {"tokens": o, "finish_reason": "eos" if len(o) < max_new_tokens else "length"}
            for o in outs
        ]

    chk = VISIBLE.get("generate_loop")
    rules = [
        m
        for label, m in evaluate(chk, wrapped, raise_on_fail=False, quiet=True).failures
        if label == "rules"
    ]
    assert rules and "course_lib.generate.generate" in rules[0]
    course = Course()
    reference = reference_namespace(
        course, course.solutions / "04_generation_loop" / "04_generation_loop.ipynb"
    )
    assert evaluate(chk, reference["generate_loop"], raise_on_fail=False, quiet=True).passed


def test_a_local_named_like_an_import_is_the_functions_own_and_a_module_chain_is_still_read():
    """White-box red team 21 (B13, fairness): an honest softmax whose helper had a parameter named
    `check` (the set-up cell imports course_lib.checks' `check`) lost its exercise: the reading
    resolved the parameter through the import. A bare name the function binds is now its own; a
    chain rooted at such a name is still read through the imports (a parameter `torch` handed the
    module). Controls: the same helper with the name renamed; the check named as the import."""
    setup = "import torch\nfrom course_lib.checks import check, check_all\n"
    honest = (
        "def _stable(x, check):\n    return x - (x.amax(-1, keepdim=True) if check else 0)\n"
        "def softmax(logits):\n    e = _stable(logits, True).exp()\n    return e / e.sum(-1, "
        "keepdim=True)\n"
    )
    rules = [*SOFTMAX_FORBIDDEN, "course_lib.checks.*"]
    assert notebook_violations([setup, honest], "softmax", rules) == []
    assert notebook_violations([setup, honest.replace("check", "shift")], "softmax", rules) == []
    handed = (
        "def _f(x, torch):\n    return torch.softmax(x, -1)\ndef softmax(logits):\n    "
        "return _f(logits, torch)\n"
    )
    assert notebook_violations([setup, handed], "softmax", rules) != []
    calls = "def softmax(logits):\n    check('softmax', None)\n    return logits\n"
    assert notebook_violations([setup, calls], "softmax", rules) != []


def test_a_helper_linked_by_a_call_is_read_and_a_clean_attribute_does_not_clear_a_forbidden_one():
    """White-box red team 22 (C7): 02's log_softmax reached np.logaddexp (a numpy ufunc called from
    C, which the run-time watch cannot see) through a helper stored on an instance by ``setattr(_H,
    "f", helper)``, a call, which the reading did not follow (it followed names and bindings).
    Module-level calls now link what they are given: setattr, a method of the holder
    (``_K.append(helper)``), a function of the notebook's; and an attribute stored on a holder never
    clears what another attribute of it holds (``box.g = 0`` after ``box.f = np.logaddexp``). The
    live reading (the kernel's) reads a notebook class's instance attributes. Controls: the honest
    helpers and print() of a forbidden call beside an answer's global."""
    import types

    from course_lib.checks.rules import notebook_violations

    lse = (
        "import numpy as np\n\ndef _lse(x):\n    return np.logaddexp(x, x)\n\nclass _Box:\n    "
        "pass\n\n"
    )
    attacks = [
        [
            lse + "_H = _Box()\nsetattr(_H, 'f', _lse)\n",
            "def log_softmax(x):\n    return x - _H.f(x)\n",
        ],
        [lse + "_K = []\n_K.append(_lse)\n", "def log_softmax(x):\n    return x - _K[0](x)\n"],
        [
            "import numpy as np\n_K = []\n_K.append(np.logaddexp)\n",
            "def log_softmax(x):\n    return _K[0](x, x)\n",
        ],
        [
            "import numpy as np\nclass _B:\n    pass\nbox = _B()\nsetattr(box, 'f', "
            "np.logaddexp)\n",
            "def log_softmax(x):\n    return box.f(x, x)\n",
        ],
        [
            lse + "def register(box, f):\n    box.f = f\n\n_H = _Box()\nregister(_H, _lse)\n",
            "def log_softmax(x):\n    return x - _H.f(x)\n",
        ],
        [
            "import numpy as np\nclass _B:\n    pass\n"
            "box = _B()\nbox.f = np.logaddexp\nbox.g = 0\n",
            "def log_softmax(x):\n    return box.f(x, x)\n",
        ],
    ]
    for cells in attacks:
        assert notebook_violations(cells, "log_softmax", ["numpy.logaddexp"]), cells
    honest = [
        [
            "import torch\nlogits = torch.randn(5)\nprint(torch.softmax(logits, -1))\n_seen = []\n"
            "_seen.append(len)\n",
            "def log_softmax(x):\n    s = x - x.max()\n    return s - s.exp().sum().log()\n",
        ],
        # red team 22's C6 control: a self-test calling torch's softmax at top level, through
        # torch's own functions (torch is no holder), and a global handed to a function with a value
        # computed by it
        [
            "import torch\nx = torch.randn(3, 5)\ntorch.testing.assert_close(log_softmax(x), "
            "torch.log_softmax(x, -1))\n"
            "assert torch.allclose(log_softmax(x), torch.log_softmax(x, -1))\nshow(x, "
            "torch.softmax(x, -1))\n",
            "def log_softmax(z):\n    s = z - x.max()\n    return s - s.exp().sum().log()\n",
        ],
        [
            "import torch\ndef helper(x):\n    return x - x.max()\nkept = "
            "[]\nkept.append(helper)\n",
            "def log_softmax(x):\n    h = kept[0](x)\n    return h - h.exp().sum().log()\n",
        ],
    ]
    for cells in honest:
        assert (
            notebook_violations(cells, "log_softmax", ["torch.softmax", "numpy.logaddexp"]) == []
        ), cells
    # the kernel's live reading: a notebook class's instance holding the helper
    ns: dict = {"__name__": "__main__"}
    exec(compile(attacks[0][0] + attacks[0][1], "<cell>", "exec"), ns)
    box_cls = ns["_Box"]
    assert box_cls.__module__ == "__main__" and isinstance(ns["_H"].f, types.FunctionType)
    from course_lib.checks.rules import _contents

    assert ns["_lse"] in _contents(ns["_H"])


def test_an_answer_bound_again_where_the_reading_did_not_look_is_read():
    """White-box red team 22 (C9): a function saying `global softmax` rebound the answer when called
    at top level, after the honest def the reading took as the answer; the live answer used
    np.logaddexp (a ufunc the watch cannot see). Functions that declare the answer global are read
    with it, and so is the answer's name bound inside compound statements, by unpacking, as a
    `for`/`with` target or by a walrus. Control: the honest notebook, and the same helpers present
    but never bound to the answer's name."""
    from course_lib.checks.rules import notebook_violations

    helper = "import numpy as np\n\ndef _np(x):\n    return np.logaddexp(x, x)\n"
    honest = "def log_softmax(x):\n    s = x - x.max()\n    return s - s.exp().sum().log()\n"
    rebinds = [
        "def _swap():\n    global log_softmax\n    log_softmax = _np\n\n_swap()\n",
        "if True:\n    log_softmax = _np\n",
        "log_softmax, _ = _np, 0\n",
        "for log_softmax in [_np]:\n    pass\n",
        "_ = (log_softmax := _np)\n",
        "try:\n    def log_softmax(x):\n        return np.logaddexp(x, x)\n"
        "except Exception:\n    pass\n",
    ]
    for cell in rebinds:
        assert notebook_violations([helper, honest, cell], "log_softmax", ["numpy.logaddexp"]), cell
    assert notebook_violations([helper, honest], "log_softmax", ["numpy.logaddexp"]) == []
    assert (
        notebook_violations(
            [helper, honest, "y = _np(1)\nfor v in [1, 2]:\n    pass\n"],
            "log_softmax",
            ["numpy.logaddexp"],
        )
        == []
    )
    # kept in the notebook's data, the helper may reach the answer however the text links them:
    # read, found
    assert notebook_violations([helper, honest, "y = _np\n"], "log_softmax", ["numpy.logaddexp"])


def test_every_binding_of_an_answer_or_a_name_it_uses_is_read():
    """White-box red team 23 (D1): a `match` capture (`case (softmax, log_softmax):`) rebound the
    answers after the honest defs the reading took as the answers; the live ones used np.logaddexp
    (a ufunc the watch cannot see): 20/26 unflagged. The same gap held for a helper the answer
    calls, bound again by a capture, an `except ... as` name, a class or function body declaring it
    `global`, or a `def` inside a compound statement; and for the last binding in the text not being
    the last one run (a cell that raises stops before its later lines). Every binding of every
    module-level name the answer reaches is read now, whatever its form (ground truth: each cell,
    run, leaves the live answer or helper on np.logaddexp). Control: the same notebooks without the
    rebinding cell read clean."""
    from course_lib.checks.rules import notebook_violations

    helper = "import numpy as np\n\ndef _np(x):\n    return np.logaddexp(x, x)\n"
    honest = "def log_softmax(x):\n    s = x - x.max()\n    return s - s.exp().sum().log()\n"
    through = (
        "def _h(x):\n    return x - x.max()\n\ndef log_softmax(x):\n    s = _h(x)\n    "
        "return s - s.exp().sum().log()\n"
    )
    answer_rebinds = [
        "match (_np, 0):\n    case (log_softmax, _):\n        pass\n",
        "match {'f': _np}:\n    case {'f': log_softmax}:\n        pass\n",
        "match [_np]:\n    case [*log_softmax]:\n        log_softmax = log_softmax[0]\n",
        "log_softmax = _np\nraise ValueError('the def below never runs')\n" + honest,
    ]
    helper_rebinds = [
        "def _swap():\n    global _h\n    _h = _np\n\n_swap()\n",
        "class _K:\n    global _h\n    _h = _np\n",
        "try:\n    raise ValueError(_np)\nexcept ValueError as _e:\n    _h = _e.args[0]\n",
        "match _np:\n    case _h:\n        pass\n",
        "match 1:\n    case 1:\n        _h = _np\n",
        "for _ in [1]:\n    def _h(x):\n        return np.logaddexp(x, x)\n",
        "_h = _np\nraise ValueError('the def below never runs')\n" + through,
    ]
    for cells in [[helper, honest, c] for c in answer_rebinds] + [
        [helper, through, c] for c in helper_rebinds
    ]:
        ns: dict = {"__name__": "__main__"}
        # the truth: run as the verification runs cells (an error ends its cell only)
        for cell in cells:
            try:
                exec(compile(cell, "<cell>", "exec"), ns)
            except ValueError:
                pass
        live = ns["log_softmax"] if cells[1] == honest else ns["_h"]
        assert "logaddexp" in live.__code__.co_names or live.__name__ == "_np", cells[-1]
        assert notebook_violations(cells, "log_softmax", ["numpy.logaddexp"]), cells[-1]
    assert notebook_violations([helper, honest], "log_softmax", ["numpy.logaddexp"]) == []
    assert notebook_violations([helper, through], "log_softmax", ["numpy.logaddexp"]) == []


def test_a_name_bound_twice_is_read_in_both_bindings_and_locals_are_the_functions_own():
    """Which binding a run ends with is not in the text, so a module-level name bound to a forbidden
    function once and to an allowed one later is read as both (the live reading, on the finished
    namespace, sees only the last: the text is the stricter reading, on purpose). A name that only a
    nested function or lambda binds, or that the answer declares `global`, is not the answer's own
    local: it is the module's, and read."""
    from course_lib.checks.rules import notebook_violations

    rebound = "import torch\nOPS = {'sm': torch.softmax}\nOPS = {'sm': torch.exp}\n"
    use = (
        "def answer(x):\n    e = OPS['sm'](x - x.amax(-1, keepdim=True))\n    return e / "
        "e.sum(-1, keepdim=True)\n"
    )
    assert {v.rule for v in notebook_violations([rebound, use], "answer", SOFTMAX_FORBIDDEN)} == {
        "torch.softmax"
    }
    helper = "import torch\ndef _h(x):\n    return torch.softmax(x, -1)\n"
    hidden = [
        "def answer(x):\n    def inner():\n        _h = 0\n    return _h(x)\n",
        "def answer(x):\n    f = lambda: [(_h := 0) for _ in [1]]\n    return _h(x)\n",
        "def answer(x):\n    global _h\n    return _h(x)\n",
    ]
    for cell in hidden:
        assert notebook_violations([helper, cell], "answer", SOFTMAX_FORBIDDEN), cell
    own = (
        "def answer(x):\n    _h = lambda z: z.exp() / z.exp().sum(-1, keepdim=True)\n    return "
        "_h(x)\n"
    )
    assert notebook_violations([helper, own], "answer", SOFTMAX_FORBIDDEN) == []


def test_every_function_the_notebook_keeps_is_read_and_the_course_s_own_code_only_once_reached():
    """White-box red team 23 (D2): seven ways to hand a helper to the answer that no list of link
    forms held (a capture, `global` in a function or a class body, a function that stores its
    argument, a registering decorator, `__init_subclass__`, an exception's args). The reading no
    longer follows links: a function whose object is anywhere in the notebook's data may run inside
    any answer, so its body is read for every rule; only a plain `def` named nowhere but as a call's
    function runs where the text calls it. Controls: a helper used only as a call in a self-test,
    and the course's own statements (the notes' block on nn.MultiheadAttention), which are read once
    the student's code reads a name they bind, however indirectly."""
    from course_lib.checks.rules import course_statements, notebook_violations

    helper = "import numpy as np\n\ndef _np(x):\n    return np.logaddexp(x, x)\n"
    answer = "def log_softmax(x):\n    return x - _H(x)\n"
    kept = {
        "regfn": "class _B:\n    pass\n_b = _B()\ndef _reg(b):\n    b.s = _np\n_reg(_b)\n_H = "
        "lambda x: _b.s(x)\n",
        "decorator": "_REG = {}\ndef _register(f):\n    _REG[f.__name__] = f\n    return "
        "f\n@_register\n"
        "def _s2(x):\n    return np.logaddexp(x, x)\n_H = lambda x: _REG['_s2'](x)\n",
        "init_subclass": "class _Base:\n    reg = {}\n    def __init_subclass__(cls, **kw):\n"
        "        _Base.reg[cls.__name__] = cls\nclass _S(_Base):\n    def __call__(self, x):\n"
        "        return _np(x)\n_H = lambda x: _Base.reg['_S']()(x)\n",
        "exception args": "try:\n    raise Exception(_np)\nexcept Exception as _e:\n    _H = "
        "_e.args[0]\n",
        "generator": "def _g():\n    while True:\n        yield np.logaddexp(1.0, 2.0)\n_it = "
        "_g()\n"
        "_H = lambda x: x * 0 + next(_it)\n",
    }
    for how, cell in kept.items():
        assert notebook_violations([helper, cell, answer], "log_softmax", ["numpy.logaddexp"]), how
    honest = "def _H(x):\n    return x.max()\n"
    selftest = "def ref(x):\n    return np.logaddexp(x, x)\nprint(ref(2.0), _np(1.0))\n"
    assert (
        notebook_violations([helper, honest, selftest, answer], "log_softmax", ["numpy.logaddexp"])
        == []
    )

    rules = ["torch.nn.MultiheadAttention"]
    release = [
        "import torch\nfrom torch import nn\n",
        "class Block(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.attention = nn.MultiheadAttention(4, 1, batch_first=True)\n"
        "    def forward(self, x):\n        return self.attention(x, x, x)[0]\n",
        "block = Block()\n",
        "def attend(q, k, v):\n    raise NotImplementedError()\n",
    ]
    course = course_statements(release)
    mine = "def attend(q, k, v):\n    w = (q @ k.transpose(-2, -1)).softmax(-1)\n    return w @ v\n"
    assert notebook_violations(release[:3] + [mine], "attend", rules, course) == []
    # without the release: read as the student's
    assert notebook_violations(release[:3] + [mine], "attend", rules)
    for gadget in ["_R = [block]\n", "_R = [Block]\n", "other = block\n_R = [other]\n"]:
        uses = "def attend(q, k, v):\n    return _R[0](q)\n"
        assert notebook_violations(release[:3] + [gadget, uses], "attend", rules, course), gadget


def test_an_answer_timed_with_cell_time_is_read_in_the_kernel_and_in_the_grader():
    """White-box red team 23 (D11): the instructor's softmax with `%%time` as its first line lost
    its exercise (16/26): IPython compiles the body as '<timed exec>', which inspect cannot read ("a
    function made from a string"), and the grader's reading saw one run_cell_magic call and no def.
    Both readings now read the body (the kernel from its input history, the grader through
    rules.plain_cell); a forbidden call in it is still found. Ground truth: a real IPython shell
    runs the cells."""
    from IPython.core.interactiveshell import InteractiveShell

    honest = (
        "%%time\ndef answer(x):\n    e = (x - x.amax(-1, keepdim=True)).exp()\n    return e "
        "/ e.sum(-1, keepdim=True)\n"
    )
    forbidden = "%%time\nimport torch\n\ndef answer(x):\n    return torch.softmax(x, -1)\n"
    shell = InteractiveShell.instance()
    try:
        for cell, expected in ((honest, set()), (forbidden, {"torch.softmax"})):
            assert shell.run_cell(cell, store_history=True).success  # as a kernel runs a cell
            fn = shell.user_ns["answer"]
            assert fn.__code__.co_filename == "<timed exec>"
            assert {v.rule for v in function_violations(fn, SOFTMAX_FORBIDDEN)} == expected, cell
            assert {
                v.rule
                for v in notebook_violations(["import torch\n", cell], "answer", SOFTMAX_FORBIDDEN)
            } == expected, cell
    finally:
        InteractiveShell.clear_instance()


def test_an_object_a_forbidden_class_made_is_read_wherever_the_answer_can_reach_it():
    """Found while replacing the link-following (white-box red team 23's design): an instance of a
    forbidden class made at module level (`_m = nn.MultiheadAttention(...)`) holds the forbidden
    code without naming it again. A module-level name bound to one is read wherever the answer (or a
    kept function) reads it; one put anywhere else (a container, an attribute, an argument) is a
    finding; one used at once (a self-test calling it, printing it) is not. Truth: each attack
    answer computes attention with the instance."""
    import torch

    rules = ["torch.nn.MultiheadAttention", "torch.nn.functional.scaled_dot_product_attention"]
    answer = "def attend(q, k, v):\n    return _m(q, k, v)[0]\n"
    attacks = [
        "import torch\n_m = torch.nn.MultiheadAttention(8, 2, batch_first=True)\n",
        "import torch\n_R = {}\n_R['m'] = torch.nn.MultiheadAttention(8, 2, batch_first=True)\n"
        "_m = lambda *a: _R['m'](*a)\n",
        "import torch\n_n = torch.nn.MultiheadAttention(8, 2, batch_first=True)\n_m = _n\n",
        "import torch\nmatch torch.nn.MultiheadAttention(8, 2, batch_first=True):\n    case _m:\n "
        "       pass\n",
        "import torch\nclass _B:\n    pass\n_b = _B()\n_b.m = torch.nn.MultiheadAttention(8, 2, "
        "batch_first=True)\n"
        "_m = lambda *a: _b.m(*a)\n",
    ]
    x = torch.randn(1, 3, 8)
    for cell in attacks:
        ns: dict = {}
        exec(compile(cell + answer, "<cell>", "exec"), ns)
        assert ns["attend"](x, x, x).shape == (1, 3, 8)
        assert {v.rule for v in notebook_violations([cell, answer], "attend", rules)} == {
            rules[0]
        }, cell
    honest = (
        "def attend(q, k, v):\n    w = (q @ k.transpose(-2, -1)).softmax(-1)\n    return w @ v\n"
    )
    selftests = [
        "import torch\nx = torch.randn(1, 3, 8)\nref = torch.nn.MultiheadAttention(8, 2, "
        "batch_first=True)(x, x, x)[0]\n",
        "import torch\nh = torch.nn.MultiheadAttention(8, 2, batch_first=True)\nprint(h)\nout = "
        "h(x, x, x)\n",
    ]
    for cell in selftests:
        assert notebook_violations([cell, honest], "attend", rules) == [], cell


def test_attention_by_multiheadattentions_own_functional_breaks_the_attention_rules():
    """White-box red team 24 (E2): `nn.MultiheadAttention.forward` delegates to
    `F.multi_head_attention_forward`, whose slow path (need_weights=True) no run-time watch names;
    01's and 04's attention checks list it. Truth: the attack computes attention with it (the red
    team's 22/28, the honest score). Control: the written-out attention reads clean."""
    from autograde.hidden import generation_loop as h04
    from autograde.hidden import pipeline_trace as h01
    from course_lib.checks import pipeline_trace as v01

    attack = (
        "import torch\n"
        "def causal_attention(q, k, v):\n"
        "    T, d = q.shape[-2], q.shape[-1]\n"
        "    mask = torch.ones(T, T, dtype=torch.bool).triu(1)\n"
        "    _, w = torch.nn.functional.multi_head_attention_forward(q, k, v, d, 1, None, None,\n"
        "        None, None, False, 0.0, None, None, need_weights=True, attn_mask=mask)\n"
        "    return w @ v\n"
    )
    honest = (
        "import math, torch\n"
        "def causal_attention(q, k, v):\n"
        "    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n"
        "    T = s.shape[-1]\n"
        "    s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float('-inf'))\n"
        "    return s.softmax(-1) @ v\n"
    )
    visible = next(c for c in v01.CHECKS if c.name == "causal_attention").forbidden
    hidden04 = next(c for c in h04.CHECKS if c.name == "attend_with_cache_hidden").forbidden
    # white-box red team 25 (E11): the MultiheadAttention a library layer holds (self_attn)
    layer = (
        "import torch\n"
        "_enc = torch.nn.TransformerEncoderLayer(d_model=4, nhead=1, batch_first=True)\n"
        "def causal_attention(q, k, v):\n"
        "    T = q.shape[-2]\n"
        "    mask = torch.ones(T, T, dtype=torch.bool).triu(1)\n"
        "    _, w = _enc.self_attn(q, k, v, need_weights=True, attn_mask=mask)\n"
        "    return w @ v\n"
    )
    for rules in (visible, h01.ATTENTION_FORBIDDEN, hidden04):
        assert notebook_violations([attack], "causal_attention", list(rules)), rules
        assert notebook_violations([layer], "causal_attention", list(rules)), rules
        assert notebook_violations([honest], "causal_attention", list(rules)) == [], rules


def test_a_forbidden_function_under_another_modules_path_is_read_as_itself():
    """White-box red team 24 (E3): numpy.ma.core imports numpy's ufunc module as `mu`, so
    `np.ma.core.mu.logaddexp` is np.logaddexp under a path no list holds; it was read clean (20/26,
    the honest score). Names are compared by the object they stand for. Truth: the identity, checked
    here; control: numpy names that are other objects read clean."""
    import numpy as np

    assert np.ma.core.mu.logaddexp is np.logaddexp
    answer = "def log_softmax(x):\n    return functools.reduce({}, x)\n"
    setup = "import functools\nimport numpy as np\n"
    for path in ("np.ma.core.mu.logaddexp", "np.ma.core.umath.logaddexp", "np.logaddexp"):
        found = notebook_violations(
            [setup, answer.format(path)], "log_softmax", ["numpy.logaddexp"]
        )
        assert [v.rule for v in found] == ["numpy.logaddexp"], path
    for path in ("np.ma.core.mu.maximum", "np.maximum", "np.ma.core.np.add"):
        assert (
            notebook_violations([setup, answer.format(path)], "log_softmax", ["numpy.logaddexp"])
            == []
        )


def test_looking_at_a_forbidden_function_is_not_keeping_it():
    """White-box red team 24 (F2): `help(torch.softmax)`, its `__doc__` printed, or it shown in an
    f-string cost an honest 02 notebook softmax and log_softmax (12/26, flagged). Looking is not
    keeping; a module-level name or container bound to it still is (control)."""
    answer = (
        "def softmax(x):\n    e = (x - x.max(-1, keepdim=True).values).exp()\n"
        "    return e / e.sum(-1, keepdim=True)\n"
    )
    looks = [
        "help(torch.softmax)",
        "print(torch.softmax.__doc__[:200])",
        "print(f'{torch.softmax}', torch.softmax.__name__)",
        "dir(torch.softmax)",
        "print(torch.softmax)",
    ]
    for cell in looks:
        assert (
            notebook_violations(
                ["import torch\n", cell, answer], "softmax", list(SOFTMAX_FORBIDDEN)
            )
            == []
        ), cell
    for cell in [
        "f = torch.softmax",
        "impls = [torch.softmax]",
        "g = print(torch.softmax) or torch.softmax",
    ]:
        assert notebook_violations(
            ["import torch\n", cell, answer], "softmax", list(SOFTMAX_FORBIDDEN)
        ), cell


def test_a_given_helper_bound_again_by_the_notebook_breaks_its_checks_rule():
    """White-box red team 25 (E7): 01's embedding check calls run_embedding_layer, a helper of the
    course's locked cell; a cell of the notebook bound it again to a formula while EmbeddingLayer
    stayed the stub, and earned 3 points (22/28 vs the stub's 19/28). The grader's reading now fails
    the check when the notebook binds a given name in any statement that is not the course's own.
    Controls: the course's own cell (run again or copied verbatim) and other exercises' names."""
    import nbformat

    from autograde.course import REPO
    from autograde.inside.cells import is_solution
    from course_lib.checks.rules import course_statements, given_names, rebinds

    release = nbformat.read(
        str(REPO / "notebooks" / "01_pipeline_trace" / "01_pipeline_trace.ipynb"), as_version=4
    )
    code = [c.source for c in release.cells if c.cell_type == "code"]
    given = given_names(
        [c.source for c in release.cells if c.cell_type == "code" and not is_solution(c)]
    )
    course = course_statements(code)
    assert "run_embedding_layer" in given and "EmbeddingLayer" not in given
    helper = next(s for s in code if "def run_embedding_layer" in s)
    assert not rebinds(code, "run_embedding_layer", course)  # the release itself
    assert not rebinds([*code, helper], "run_embedding_layer", course)  # the cell copied
    for cell in (
        "def run_embedding_layer(tok, pos, ids):\n    return tok[ids] + pos[: ids.shape[-1]]",
        "run_embedding_layer = lambda tok, pos, ids: tok[ids] + pos[: ids.shape[-1]]",
        "from math import fsum as run_embedding_layer",
        "for run_embedding_layer in [print]:\n    pass",
        "def f():\n    global run_embedding_layer\n    run_embedding_layer = print\nf()",
        "(run_embedding_layer := print)",
    ):
        assert rebinds([*code, cell], "run_embedding_layer", course), cell
        assert not rebinds([*code, cell], "TransformerBlock", course), cell
