"""Visible checks for notebook 04 (the generation loop and the KV cache).

Every expected value here is an independent truth, never the reference solution's output:
- `generate_loop`: a toy "next id" language model (after token i, token i + 1 is by far the most
likely), so
  greedy output is known by hand (`[3] -> 4, 5, 6, ...`); a toy tokenizer whose pieces spell "User:"
  over three tokens (a stop string split across tokens); and, for a batch on a real transformer
  (tiny, random weights from a fixed seed), `course_lib.generate.generate`, a second implementation
  of the loop. (No check runs SmolLM2: a loop without a cache costs seconds per case on a busy CPU;
  the notebook's demo runs it.)
- `attend_with_cache`: attention written out in float64 (explicit mask, explicit head mapping h -> h
// group);
- `kv_cache_bytes`: the formula evaluated by hand, and `course_lib.model.KVCache.nbytes()`;
- `weight_bytes`: the byte sizes the GGUF format gives SmolLM2's tensors (Q4_1: 20 bytes per block
of 32,
  Q8_0: 34, F32: 4 per weight; docs: ggml's block_q4_1 / block_q8_0), worked out by hand, and
  promised errors;
- `fit_exponent`: exact power laws (slope known) and noisy points whose least-squares slope is
worked out by hand;
- `beam_search`: a 4-token table language model whose beam, greedy and length-normalised answers
were
  worked out by hand (docs/notebook04.md shows the arithmetic).
"""

from __future__ import annotations

import functools
import math

import torch

from course_lib.checks.engine import (
    Case,
    Check,
    Contract,
    Generator,
    Resource,
    allclose,
    raises_case,
    register_resource,
)
from course_lib.checks.toy_models import RefusingTableLM

ASSIGNMENT = "04_generation_loop"

NEXT_V = 16  # vocabulary of the next-id toy model
PIECES = ["<pad>", "a", "b", " ", "Us", "er", ":", "\n", "\n", "x", "y", "z", "END", "!", "?", "."]


# --------------------------------------------------------------------------------------------- toy
# models
class TableLM(torch.nn.Module):
    """A bigram model: logits for the next token depend only on the current one, `table[idx]` (B, T,
    V)."""

    def __init__(self, table: torch.Tensor):
        super().__init__()
        self.table = torch.nn.Parameter(table.float(), requires_grad=False)  # (V, V)

    def forward(self, idx: torch.Tensor, **kwargs) -> torch.Tensor:
        return self.table[idx]  # (B, T, V); ignores attention_mask / cache


def next_id_lm() -> TableLM:
    """After token i, token (i + 1) % 16 has logit 10 and every other token 0."""
    table = torch.zeros(NEXT_V, NEXT_V)
    table[torch.arange(NEXT_V), (torch.arange(NEXT_V) + 1) % NEXT_V] = 10.0
    return TableLM(table)


def call_limited_lm(calls: int) -> RefusingTableLM:
    """The next-id model for a one-token prompt, refusing more than `calls` calls per generation: a
    loop that goes on after every row has finished is caught whether or not it still grows the
    sequence. A call on a one-position input starts a new generation (the prompt), so one instance
    serves every case."""
    seen = 0

    def refuse(idx: torch.Tensor) -> str | None:
        nonlocal seen
        seen = 1 if idx.shape[-1] == 1 else seen + 1
        if seen > calls:
            return (
                f"the model was called {seen} times, but every row had finished after {calls}: "
                "stop the loop once all rows are done"
            )
        return None

    return RefusingTableLM(next_id_lm().table.data, refuse)


# Probabilities of the beam-search toy model: 0 = A, 1 = B, 2 = C, 3 = EOS.
BEAM_P = [
    [0.05, 0.50, 0.35, 0.10],  # after A
    [0.30, 0.24, 0.20, 0.26],  # after B
    [0.02, 0.03, 0.05, 0.90],  # after C
    [0.25, 0.25, 0.25, 0.25],
]  # after EOS (never used)
BEAM_EOS = 3


def beam_lm() -> TableLM:
    """Bigram model whose next-token probabilities are exactly `BEAM_P` (logits = log p)."""
    return TableLM(torch.tensor(BEAM_P, dtype=torch.float64).log())


class ToyTokenizer:
    """decode(ids) = the pieces of `PIECES` joined: ids 4, 5, 6 spell "User:" in three tokens."""

    def __init__(self, pieces: list[str] | None = None):
        self.pieces = pieces or PIECES

    def decode(self, ids) -> str:
        return "".join(self.pieces[int(i) % len(self.pieces)] for i in ids)


def tiny_lm() -> torch.nn.Module:
    """`ModelConfig.tiny()` (2 layers, 4 query / 2 KV heads, vocab 256) with weights drawn from a
    fixed seed."""
    from course_lib.model import ModelConfig, Transformer

    model = Transformer(ModelConfig.tiny())
    g = torch.Generator().manual_seed(1234)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            if p.ndim == 1:
                p.fill_(1.0)  # norm weights
            else:
                p.copy_(
                    torch.randn(p.shape, generator=g)
                    * (0.1 if "embed" in name else 2.0 * p.shape[1] ** -0.5)
                )
    return model.eval()


def shifted_step(logits: torch.Tensor) -> torch.Tensor:
    """A deliberately odd step: the most likely id plus one (so a loop that ignores `step` is
    caught)."""
    return (logits.argmax(dim=-1) + 1) % logits.shape[-1]


def greedy_needs_generator(
    logits: torch.Tensor, generator: torch.Generator | None = None
) -> torch.Tensor:
    """Greedy, but refuses to run without the generator the caller passed to the loop."""
    if not isinstance(generator, torch.Generator):
        raise TypeError("this step needs generator=...: pass the loop's generator on to the step")
    return logits.argmax(dim=-1)


def greedy_step(logits: torch.Tensor) -> torch.Tensor:
    """argmax of each row."""
    return logits.argmax(dim=-1)


register_resource("nb04_next_id_lm", next_id_lm)
register_resource("nb04_next_id_lm_3calls", lambda: call_limited_lm(3))
register_resource("nb04_beam_lm", beam_lm)
register_resource("nb04_tiny_lm", tiny_lm)
register_resource("nb04_toy_tokenizer", ToyTokenizer)
register_resource("nb04_greedy", lambda: greedy_step)
register_resource("nb04_shifted_step", lambda: shifted_step)
register_resource("nb04_needs_generator", lambda: greedy_needs_generator)


# ------------------------------------------------------------------------------------------
# comparators
def generations(expected, got, case: Case) -> str | None:
    """A list of {"tokens": [...], "finish_reason": ...} per prompt, compared exactly, with a
    diagnosis."""
    if not isinstance(got, list) or not all(isinstance(r, dict) for r in got):
        return "return a list with one dict {'tokens': [...], 'finish_reason': ...} per prompt"
    if len(got) != len(expected):
        return f"expected {len(expected)} results (one per prompt), got {len(got)}"
    for r, (e, g) in enumerate(zip(expected, got)):
        if set(g) != {"tokens", "finish_reason"}:
            return f"row {r}: keys must be 'tokens' and 'finish_reason', got {sorted(g)}"
        toks = g["tokens"]
        if isinstance(toks, torch.Tensor):
            toks = toks.tolist()
        if not isinstance(toks, list) or not all(
            isinstance(t, int) and not isinstance(t, bool) for t in toks
        ):
            return f"row {r}: 'tokens' must be a list of Python ints (use .tolist() / int(...))"
        et = list(e["tokens"])
        if toks != et:
            msg = f"row {r}: expected tokens {et}, got {toks}"
            if toks[: len(et)] == et and len(toks) == len(et) + 1:
                msg += (
                    " (one extra token at the end: is the EOS token included, or "
                    "max_new_tokens off by one?)"
                )
            elif et[: len(toks)] == toks and len(toks) < len(et):
                msg += (
                    " (you stopped too early: stop sequences match the NEW tokens only; "
                    "max_new_tokens?)"
                )
            elif len(toks) > len(et) and toks[: len(et)] == et and e.get("finish_reason") == "eos":
                msg += (
                    f" (you did not stop at the EOS id {case.kwargs.get('eos_id')}: every id can "
                    "be the EOS, the first one too)"
                )
            elif len(toks) > len(et) and toks[: len(et)] == et:
                msg += (
                    " (you did not stop: a stop string may be split across several tokens; "
                    "decode all new tokens)"
                )
            return msg
        if g["finish_reason"] != e["finish_reason"]:
            return (
                f"row {r}: finish_reason should be {e['finish_reason']!r}, got "
                f"{g['finish_reason']!r}"
            )
    return None


def beam_result(tol: float = 1e-4):
    """(tokens, score): tokens exactly, score within `tol`."""

    def compare(expected, got, case: Case) -> str | None:
        if not isinstance(got, tuple) or len(got) != 2:
            return "return a tuple (tokens: list[int], score: float)"
        toks, score = got
        if isinstance(toks, torch.Tensor):
            toks = toks.tolist()
        if not isinstance(toks, list) or not all(
            isinstance(t, int) and not isinstance(t, bool) for t in toks
        ):
            return "tokens must be a list of Python ints (no EOS at the end)"
        if toks != list(expected[0]):
            msg = f"expected tokens {list(expected[0])}, got {toks}"
            if toks[:-1] == list(expected[0]) and toks and toks[-1] == BEAM_EOS:
                msg += " (leave the EOS token out of the returned tokens)"
            return msg
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            return (
                f"score must be a Python float, got {type(score).__name__} (use float(...) or "
                ".item())"
            )
        s = float(score)
        if not math.isfinite(s) or abs(s - expected[1]) > tol:
            return (
                f"tokens are right but the score is {s:.6f}, expected {expected[1]:.6f} (score = "
                "sum of log p of "
                "the new tokens, EOS included, divided by their number ** length_penalty)"
            )
        return None

    return compare


def int_exact(expected, got, case: Case) -> str | None:
    """An int equal to the expected one."""
    if isinstance(got, bool) or not isinstance(got, int):
        return f"return a Python int number of bytes, got {type(got).__name__} {got!r}"
    if got != expected:
        return f"expected {expected:,} bytes, got {got:,}" + _kv_diagnosis(expected, got, case)
    return None


def _kv_diagnosis(expected: int, got: int, case: Case | None) -> str:
    """Name a mistake only when making it on this case's inputs gives exactly the student's value,
    and only one mistake does (on a GQA case with 8 query heads per KV head, "bits" and "query
    heads" both give 8x)."""
    args = tuple(case.args) if case is not None else ()
    if len(args) < 6 or not all(isinstance(a, int) for a in args[:6]):
        return ""
    n_head, n_kv = args[1], args[2]
    mistakes = [
        (
            expected // 2 if expected % 2 == 0 else None,
            "keys AND values are cached: a factor 2 is missing",
        ),
        (expected * 8, "bytes, not bits: do not multiply by 8"),
        (
            expected * n_head // n_kv if n_kv and expected * n_head % n_kv == 0 else None,
            "only the KV heads are cached, not every query head",
        ),
    ]
    why = [w for value, w in mistakes if value is not None and value == got]
    return f" ({why[0]})" if len(why) == 1 else ""


# -------------------------------------------------------------------------------------------
# exercise 1
def _gen(tokens: list[int], reason: str) -> dict:
    return {"tokens": tokens, "finish_reason": reason}


def _second_implementation(
    model_name: str, prompts: list[list[int]], n: int, eos: int
) -> list[dict]:
    """course_lib.generate.generate (greedy, stop on eos) as the truth; reason eos iff it stopped
    early."""
    from course_lib.checks.engine import _resolve
    from course_lib.generate import generate

    model = _resolve(Resource(model_name), {})
    out = generate(model, prompts, n, stop_tokens=(eos,), progress=False)
    return [_gen(o, "eos" if len(o) < n else "length") for o in out]


@functools.lru_cache(maxsize=None)
def _tiny_truth() -> tuple:
    return tuple(_second_implementation("nb04_tiny_lm", TINY_PROMPTS, 7, TINY_EOS))


TINY_PROMPTS = [[5, 17], [200, 3, 99, 41, 7], [1, 2, 3, 4, 5, 6, 7, 8, 9]]
# greedy row 1 reads 117, 180, 117, 84: it ends there; rows 0 and 2 never produce 84
TINY_EOS = 84


def _generate_loop_cases() -> list[Case]:
    lm, tok = Resource("nb04_next_id_lm"), Resource("nb04_toy_tokenizer")
    g = Resource("nb04_greedy")
    cases = [
        Case(
            (lm, [[3]], 5, g),
            label="next-id model, no stop: 5 tokens",
            expected=[_gen([4, 5, 6, 7, 8], "length")],
        ),
        Case(
            (lm, [[3]], 10, g),
            dict(eos_id=6),
            label="EOS id 6 ends the row (EOS itself not returned)",
            expected=[_gen([4, 5], "eos")],
        ),
        Case((lm, [[3]], 0, g), label="max_new_tokens = 0", expected=[_gen([], "length")]),
        Case(
            (lm, [[3]], 10, g),
            dict(stop_sequences=[[7, 8]]),
            label="token stop sequence [7, 8] (included)",
            expected=[_gen([4, 5, 6, 7, 8], "stop")],
        ),
        Case(
            (lm, [[3]], 4, g),
            dict(stop_sequences=[[3, 4]]),
            label="stop sequence [3, 4] spans prompt + first new token: only NEW tokens count",
            expected=[_gen([4, 5, 6, 7], "length")],
        ),
        Case(
            (lm, [[2]], 10, g),
            dict(stop_sequences=["User:"], tokenizer=tok),
            label='text stop "User:" split over three tokens " ", "Us", "er", ":"',
            expected=[_gen([3, 4, 5, 6], "stop")],
        ),
        Case(
            (lm, [[8]], 10, g),
            dict(stop_sequences=["zz", [13, 14], "xy"], tokenizer=tok, eos_id=15),
            label='several stops: "zz", [13, 14], "xy" -> "xy" after tokens 9, 10 comes first',
            expected=[_gen([9, 10], "stop")],
        ),
        Case(
            (lm, [[3], [10, 11, 12], [0, 1]], 4, g),
            dict(eos_id=14),
            label="batch of prompts of lengths 1, 3, 2; row 1 ends on EOS first",
            expected=[
                _gen([4, 5, 6, 7], "length"),
                _gen([13], "eos"),
                _gen([2, 3, 4, 5], "length"),
            ],
        ),
        Case(
            (lm, [[3]], 3, Resource("nb04_shifted_step")),
            label="a non-greedy step (argmax + 1) is used",
            expected=[_gen([5, 7, 9], "length")],
        ),
        Case(
            (lm, [[3]], 3, Resource("nb04_needs_generator")),
            dict(generator=Generator(0)),
            label="the generator is passed on to the step as generator=",
            expected=[_gen([4, 5, 6], "length")],
        ),
        Case(
            (Resource("nb04_tiny_lm"), TINY_PROMPTS, 7, g),
            dict(eos_id=TINY_EOS),
            label="tiny transformer, batch of lengths 2, 5, 9 (left padding + attention mask) vs "
            "course_lib.generate",
            expected=list(_tiny_truth()),
        ),
    ]
    return cases


# -------------------------------------------------------------------------------------------
# exercise 2
def attention_inputs(
    seed: int,
    B: int,
    nh: int,
    nkv: int,
    T: int,
    past: int,
    hd: int,
    dtype=torch.float32,
    scale: float = 1.0,
) -> tuple:
    """Seeded q, k_new, v_new, k_cache, v_cache."""
    g = torch.Generator().manual_seed(seed)
    r = lambda *s: (torch.randn(s, generator=g, dtype=torch.float64) * scale).to(dtype)  # noqa: E731
    return (
        r(B, nh, T, hd),
        r(B, nkv, T, hd),
        r(B, nkv, T, hd),
        r(B, nkv, past, hd),
        r(B, nkv, past, hd),
    )


def attention_out(rtol: float = 1e-4, atol: float = 1e-5):
    """(y, k_all, v_all): shapes, then values (any float dtype: the text promises none; float64
    inputs must get float64 accuracy, rtol 1e-9: sums of a few dozen float64 products in another
    order differ by ~1e-15)."""
    inner = allclose(rtol=rtol, atol=atol, check_dtype=False)
    inner64 = allclose(rtol=1e-9, atol=1e-12, check_dtype=False)

    def compare(expected, got, case: Case) -> str | None:
        if not isinstance(got, tuple) or len(got) != 3:
            return "return a tuple (y, k_all, v_all)"
        for name, e, g in zip(("y", "k_all", "v_all"), expected, got):
            f64 = isinstance(e, torch.Tensor) and e.dtype == torch.float64
            msg = (inner64 if f64 else inner)(e, g, case)
            if (
                msg
                and f64
                and isinstance(g, torch.Tensor)
                and g.shape == e.shape
                and inner(e, g, case) is None
            ):
                msg += " (float64 inputs: compute in float64, not float32)"
            if msg:
                extra = ""
                if name == "k_all" and isinstance(g, torch.Tensor) and g.shape == e.shape:
                    extra = (
                        " (cached positions come first, then the new ones, along the "
                        "positions axis)"
                    )
                return f"{name}: {msg}{extra}"
        return None

    return compare


ATTENTION_SPEC = [  # (label, seed, B, nh, nkv, T, past, hd, dtype)
    (
        "one decode step, 9 query heads / 3 KV heads, 7 cached positions",
        0,
        1,
        9,
        3,
        1,
        7,
        16,
        torch.float32,
    ),
    ("prefill: empty cache, 5 new positions (causal)", 1, 1, 9, 3, 5, 0, 16, torch.float32),
    (
        "chunk of 3 new positions after 4 cached ones (causal with an offset)",
        2,
        2,
        9,
        3,
        3,
        4,
        8,
        torch.float32,
    ),
    ("4 query heads, 2 KV heads: head h reads KV head h // 2", 3, 1, 4, 2, 2, 3, 8, torch.float32),
    ("plain multi-head (n_kv = n_head), batch 3", 4, 3, 4, 4, 1, 5, 8, torch.float32),
    ("head_dim 64 (the scale is 1/sqrt(64))", 5, 1, 6, 2, 2, 6, 64, torch.float32),
    ("float64 inputs: float64 accuracy (rtol 1e-9)", 6, 1, 4, 2, 3, 5, 8, torch.float64),
]


def _attention_cases() -> list[Case]:
    """Expected y from stored data (written by autograde.visible_data, which does not ship: no code
    here computes the answer); k_all and v_all are the concatenations the text spells out."""
    from course_lib.checks._attention_data import DATA

    cases = []
    for label, seed, B, nh, nkv, T, past, hd, dtype in ATTENTION_SPEC:
        args = attention_inputs(seed, B, nh, nkv, T, past, hd, dtype=dtype)
        q, k_new, v_new, k_cache, v_cache = args
        y = torch.tensor(DATA[label]["y"], dtype=dtype).reshape(DATA[label]["shape"])
        cases.append(
            Case(
                args,
                label=label,
                expected=(
                    y,
                    torch.cat([k_cache, k_new], dim=2),
                    torch.cat([v_cache, v_new], dim=2),
                ),
            )
        )
    return cases


def kv_bytes_by_hand() -> list[Case]:
    """Formula cases with the product written out, plus course_lib's preallocated cache as a second
    truth."""
    from course_lib.model import KVCache, ModelConfig

    tiny = ModelConfig.tiny()
    cache = KVCache(tiny, batch_size=3, max_len=50)  # float32: 4 bytes
    return [
        Case(
            (30, 9, 3, 64, 8192, 4),
            label="SmolLM2-135M, 8192 tokens, fp32",
            expected=2 * 30 * 3 * 64 * 8192 * 4,
        ),  # 377,487,360 = 360 MiB
        Case(
            (80, 64, 8, 128, 8192, 2),
            label="Llama-2/3-70B (80 layers, 8 KV heads, hd 128), 8192 tokens, fp16",
            # 2,684,354,560 = 2.5 GiB
            expected=2 * 80 * 8 * 128 * 8192 * 2,
        ),
        Case(
            (80, 64, 64, 128, 8192, 2),
            label="the same 70B without GQA (64 KV heads)",
            expected=2 * 80 * 64 * 128 * 8192 * 2,
        ),  # 20 GiB
        Case(
            (tiny.n_layer, tiny.n_head, tiny.n_kv_head, tiny.head_dim, 50, 4),
            dict(batch_size=3),
            label="course_lib KVCache(tiny, batch 3, 50 positions).nbytes()",
            expected=cache.nbytes(),
        ),
        Case((30, 9, 3, 64, 0, 4), label="no tokens yet: 0 bytes", expected=0),
    ]


# ------------------------------------------------------------------------------------------
# exercise 2c
def weight_bytes_by_hand() -> list[Case]:
    """Tensors of the course's model file, sized as the GGUF format stores them (one block = 32
    weights)."""
    return [
        Case(
            (49152 * 576, 32),
            label="token embedding (49152 x 576) in float32",
            expected=49152 * 576 * 4,
        ),  # 113,246,208
        Case(
            (49152 * 576, 8, 32, 2),
            label="the same embedding as the file's Q8_0 (32 int8 + a float16 scale)",
            expected=49152 * 576 // 32 * 34,
        ),  # 30,081,024
        Case(
            (1536 * 576, 4, 32, 4),
            label="one MLP weight (1536 x 576) as the file's Q4_1 (+ float16 d and m)",
            expected=1536 * 576 // 32 * 20,
        ),  # 552,960
        Case(
            (30 * 3_538_944, 4, 32, 4),
            label="all 210 linear weights of SmolLM2 (30 x 3,538,944) as Q4_1",
            expected=30 * 3_538_944 // 32 * 20,
        ),  # 66,355,200
        Case((576, 16), label="a 576-wide norm weight in float16", expected=576 * 2),
        Case((0, 4, 32, 4), label="no weights at all", expected=0),
    ] + (
        raises_case("ValueError", 48, 4, 32, 4, label="48 weights are not whole groups of 32")
        + raises_case("ValueError", 3, 4, label="3 weights x 4 bits = 12 bits is not whole bytes")
        + raises_case("ValueError", 8, 0, label="0 bits per weight")
    )


# -------------------------------------------------------------------------------------------
# exercise 3
def _fit_cases() -> list[Case]:
    ns = [64.0, 128.0, 256.0, 512.0]
    return [
        Case((ns, [3e-6 * n**2 for n in ns]), label="t = 3e-6 n^2 -> 2", expected=2.0),
        Case((ns, [0.05 * n for n in ns]), label="t = 0.05 n -> 1", expected=1.0),
        Case((ns, [0.07] * 4), label="constant -> 0", expected=0.0),
        Case(
            ([10.0, 20.0, 40.0], [1e-9 * n**3 for n in [10.0, 20.0, 40.0]]),
            label="n^3 -> 3",
            expected=3.0,
        ),
        Case(
            ([1.0, 2.0, 4.0, 8.0], [1.0, 2.0 * 1.1, 4.0 * 1.1, 8.0]),
            label="noisy linear: least squares in log-log gives exactly 1",
            expected=1.0,
        ),
        # log2: x = 0, 1, 2, 3 and y = 0, 2, 2, 3: slope = sum((x - 1.5) * y) / 5 = 4.5 / 5; the end
        # points alone give 1
        Case(
            ([1.0, 2.0, 4.0, 8.0], [1.0, 4.0, 4.0, 8.0]),
            label="one slow point inside (n=2 took 4): every point counts -> 0.9",
            expected=0.9,
        ),
    ]


# -------------------------------------------------------------------------------------------
# exercise 4
def _beam_cases() -> list[Case]:
    lm = Resource("nb04_beam_lm")
    lp = math.log
    return [
        Case(
            (lm, [0], 1, 3, BEAM_EOS),
            label="width 1 = greedy: B, A, B",
            expected=([1, 0, 1], (lp(0.5) + lp(0.3) + lp(0.5)) / 3),
        ),
        Case(
            (lm, [0], 2, 3, BEAM_EOS),
            label="width 2 finds C, EOS (better than greedy's B, A, B)",
            expected=([2], (lp(0.35) + lp(0.9)) / 2),
        ),
        Case(
            (lm, [1], 2, 3, BEAM_EOS),
            label="after B, width 2, length_penalty 1: A, C, EOS",
            expected=([0, 2], (lp(0.3) + lp(0.35) + lp(0.9)) / 3),
        ),
        Case(
            (lm, [1], 2, 3, BEAM_EOS),
            dict(length_penalty=0.0),
            label="after B, width 2, length_penalty 0 (plain sum): EOS at once wins",
            expected=([], lp(0.26)),
        ),
    ]


# course_lib's own loop (notebook 04's demonstrations use it) would answer exercises 1 and 4 for the
# student; its steps (greedy, multinomial) stay allowed: the loop's default step is greedy
LOOP_FORBIDDEN = (
    "course_lib.generate.generate",
    "course_lib.generate.stream",
    "course_lib.generate._steps",
    "course_lib.generate._left_pad",
)

CHECKS = [
    Check(
        name="generate_loop",
        exercise="generate_loop",
        cases=_generate_loop_cases,
        compare=generations,
        forbidden=LOOP_FORBIDDEN,
        hint="Run the first failing case by hand, printing idx, the mask and the chosen ids each "
        "step: is every "
        "row's last real token in the last column, does a finished row stay frozen, is a text "
        "stop searched in the decoded text of ALL its new tokens?",
    ),
    Check(
        name="attend_with_cache",
        exercise="attend_with_cache",
        cases=_attention_cases,
        compare=attention_out(),
        hint="Check on tiny shapes: the axis k_all grows along, "
        "the KV-head order your expanded keys read (0, 0, 1, 1 or 0, 1, 0, 1?), and which keys "
        "query i may see when past > 0? Scale by 1/sqrt(head_dim).",
    ),
    Check(
        name="kv_cache_bytes",
        exercise="kv_cache_bytes",
        cases=kv_bytes_by_hand,
        compare=int_exact,
        hint="List what one token stores in one layer (which tensors, for which head count, how "
        "long), then multiply up; n_head is only there for comparison.",
    ),
    Check(
        name="weight_bytes",
        exercise="weight_bytes",
        cases=weight_bytes_by_hand,
        compare=int_exact,
        hint="Redo one row of the table by hand: a Q4_1 block of 32 weights is 20 bytes; which "
        "part is weights, "
        "which is per-group overhead? ValueError for partial groups, partial bytes or bits < 1.",
    ),
    Check(
        name="fit_exponent",
        exercise="fit_exponent",
        cases=_fit_cases,
        compare=allclose(rtol=1e-6, atol=1e-6),
        contract=Contract(number=True),
        hint="Least-squares slope of log(t) against log(n).",
    ),
    Check(
        name="beam_search",
        exercise="beam_search",
        cases=_beam_cases,
        compare=beam_result(),
        forbidden=LOOP_FORBIDDEN,
        hint="Keep the best `beam_width` expansions over ALL beams; a candidate ending in EOS is "
        "finished; "
        "rank finished ones by sum log p / length ** length_penalty (EOS counted, prompt not).",
    ),
]
