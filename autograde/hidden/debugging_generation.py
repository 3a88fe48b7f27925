"""Hidden checks for notebook 05 (debugging generation): many generated cases per exercise.

Expected values are the reference solutions' outputs (solutions/05_debugging_generation), stored by
`python -m autograde release` in autograde/references/05_debugging_generation.json.

Inputs come from one seeded stream per exercise:
- token sequences over small vocabularies (2-12 ids, so n-grams repeat by chance), some with a
planted tail
  cycle of period 1-30 that may be cut mid-cycle, and near misses (one token of the cycle changed);
- logits: batches of 1-4 rows over 2-40 tokens, continuous values, heavy ties, -inf entries and
zeros, in
  float32, float16, bfloat16 and float64;
- histories [B, L] with L from 0 to 40 and prompt_len from 0 to L; windows None, 0 or 1-L+3.
No case depends on rounding at a threshold: the steps compare a logit with 0 (exact) and count
integers. Plus cases at real size (V = 49152, histories of thousands of ids, long periods and
windows; expected values from a second implementation here) and cost cases: the same rows under V =
50 and V = 5000, counted in Python lines run, where the text forbids a Python loop over the
vocabulary (or over the history).
"""

from __future__ import annotations

import math

import torch

from autograde.hidden._twins import twins
from course_lib.checks import debugging_generation as _visible
from course_lib.checks.debugging_generation import (
    cycle_pair,
    half_match,
    logits_match,
    number_close,
    raises_case,
)
from course_lib.checks.engine import Case, Check, Contract

ASSIGNMENT = "05_debugging_generation"
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
KINDS = ["normal", "ties", "neg_inf", "zeros"]


def _g(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _int(g: torch.Generator, lo: int, hi: int) -> int:
    """An integer in [lo, hi] (inclusive)."""
    return int(torch.randint(lo, hi + 1, (), generator=g))


def _seq(g: torch.Generator, length: int, vocab: int) -> list[int]:
    return torch.randint(0, vocab, (length,), generator=g).tolist()


def _logits(g: torch.Generator, B: int, V: int, dtype: torch.dtype, kind: str) -> torch.Tensor:
    """Seeded logits [B, V] of one kind; every row keeps at least one finite entry."""
    x = torch.randn(B, V, generator=g, dtype=torch.float64) * float(
        torch.empty(()).uniform_(0.5, 5.0, generator=g)
    )
    if kind == "ties":
        x = torch.round(x)
    elif kind == "neg_inf":
        mask = torch.rand(B, V, generator=g) < 0.3
        mask[:, _int(g, 0, V - 1)] = False
        x = x.masked_fill(mask, -math.inf)
    elif kind == "zeros":
        x = x.masked_fill(torch.rand(B, V, generator=g) < 0.3, 0.0)
    return x.to(dtype)


def _dtype_kind(i: int) -> tuple[torch.dtype, str]:
    return DTYPES[i % len(DTYPES)], KINDS[(i // len(DTYPES)) % len(KINDS)]


def _history(g: torch.Generator, B: int, V: int, L: int) -> torch.Tensor:
    """[B, L] ids; half the rows end in a repeat of an earlier stretch, so n-gram bans happen."""
    h = torch.randint(0, V, (B, L), generator=g)
    for r in range(B):
        if L >= 4 and bool(torch.rand((), generator=g) < 0.5):
            span = _int(g, 2, L // 2)
            start = _int(g, 0, L - 2 * span)
            h[r, L - span :] = h[r, start : start + span].clone()
    return h


# ------------------------------------------------------------------------------------------
# exercise 1
def _cycle_cases() -> list[Case]:
    g, cases = _g(501), []
    for i in range(40):
        vocab = _int(g, 2, 12)
        head = _seq(g, _int(g, 0, 12), vocab)
        period = _int(g, 1, 30 if i % 3 else 6)
        block = _seq(g, period, vocab)
        reps = _int(g, 1, 5)
        cut = _int(g, 0, period - 1)  # stop mid-cycle
        ids = head + block * reps + block[:cut]
        kw: dict = {}
        if i % 4 == 1:
            kw["min_repeats"] = _int(g, 2, 4)
        if i % 5 == 2:
            kw["max_period"] = _int(g, 1, 12)
        if i % 7 == 3 and len(ids) > 2:
            # near miss: change one token before the end
            j = _int(g, 0, len(ids) - 2)
            ids[j] = (ids[j] + 1) % vocab
        cases.append(
            Case(
                (ids,),
                kw,
                label=f"{len(ids)} ids over {vocab} symbols, planted period {period} x {reps}"
                f"{' + ' + str(cut) if cut else ''}" + (f" {kw}" if kw else ""),
            )
        )
    for n in [0, 1, 2, 3]:
        cases.append(Case(([4] * n,), label=f"{n} copies of one token"))
    cases.append(
        Case((torch.tensor([1, 2, 3, 1, 2, 3, 1, 2, 3]),), label="1-D LongTensor, period 3 x 3")
    )
    b50, b51 = list(range(100, 150)), list(range(200, 251))
    cases.append(
        Case(([1] + b50 * 2,), label="period 50 x 2: found with the default max_period=50")
    )
    cases.append(
        Case(([1] + b51 * 2,), label="period 51 x 2: longer than the default max_period=50")
    )
    # min_repeats=1: one copy is enough, so a single token is a cycle; an empty list still is none
    cases.append(Case(([7],), {"min_repeats": 1}, label="one token, min_repeats=1"))
    cases.append(Case(([],), {"min_repeats": 1}, label="empty, min_repeats=1"))
    cases.append(
        Case(
            ([3, 1, 2],),
            {"min_repeats": 1, "max_period": 5},
            label="3 distinct tokens, min_repeats=1",
        )
    )
    # a look-back cut at 14 ids passed the visible check (bug zoo: `find_cycle__last_28_ids_only`);
    # a cycle counted over 3000 ids
    cases.append(Case(([1] + [4, 5, 6, 7, 8] * 600,), label="period 5 x 600 after one other id"))
    return [
        Case(c.args, c.kwargs, c.label, compare=cycle_pair) for c in cases + _cycle_real_cases()
    ]


def _cycle_real_cases() -> list[Case]:
    """min_repeats clamped to 4 and periods tried only up to 64 kept full points (every case asked
    for 1-4 copies and max_period <= 50; bug zoo: `find_cycle__min_repeats_capped_at_4`,
    `find_cycle__max_period_capped_at_64`). Hand-made cases where the clamp changes the answer, and
    seeded generations of SmolLM2's size: hundreds to thousands of ids over V = 49152, periods up to
    400, min_repeats up to 12."""
    cases = [
        Case(
            ([1] + [7, 8, 9, 9, 9, 9] * 8,),
            {"min_repeats": 8},
            label="[7, 8, 9, 9, 9, 9] x 8, min_repeats=8: the tail 9 9 9 9 has only 4 copies of "
            "period 1",
        ),
        Case(([3] + [5, 6] * 5,), {"min_repeats": 6}, label="[5, 6] x 5, min_repeats=6: none"),
        Case(
            ([2] + [4, 1, 1, 1, 1, 1, 1, 1, 1] * 10,),
            {"min_repeats": 10, "max_period": 100},
            label="a period of 9 x 10 ending in 8 copies of one id, min_repeats=10",
        ),
    ]
    g = _g(510)
    for i, (period, reps, minr, maxp) in enumerate(
        [
            (120, 3, 2, 200),
            (300, 2, 2, 400),
            (65, 2, 2, 64),
            (80, 7, 6, 150),
            (17, 12, 11, 50),
            (250, 4, 5, 300),
        ]
    ):
        head = _seq(g, _int(g, 100, 2000), 49152)
        block = _seq(g, period, 49152)
        ids = head + block * reps + block[: _int(g, 0, period - 1)]
        cases.append(
            Case(
                (ids,),
                {"min_repeats": minr, "max_period": maxp},
                label=f"{len(ids)} ids over 49152: period {period} x {reps}, min_repeats={minr}, "
                f"max_period={maxp}",
            )
        )
    return cases


def _rate_cases() -> list[Case]:
    g, cases = _g(502), []
    for i in range(30):
        vocab = _int(g, 2, 10)
        ids = _seq(g, _int(g, 0, 40), vocab)
        n = _int(g, 1, 5)
        cases.append(Case((ids, n), label=f"{len(ids)} ids over {vocab} symbols, n={n}"))
    cases.append(Case((torch.tensor([3, 3, 4, 3, 3, 4]), 2), label="1-D LongTensor, n=2"))
    cases.append(Case(([9, 8, 7], 3), label="exactly one n-gram"))
    # zoo: *__glued_digit_keys
    cases.append(Case(([1, 23, 12, 3], 2), label="multi-digit ids: (1, 23) and (12, 3) differ"))
    cases.append(
        Case(
            ([1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 5],), label="default n=4: 4 of 9 4-grams seen before"
        )
    )
    # a look-back of a few n-grams passed (bug zoo: `repetition_rate__lookback_of_3_ngrams`); here
    # the only repeat is 40 positions back
    cases.append(
        Case(([1, 2] + list(range(10, 50)) + [1, 2], 2), label="a bigram seen 40 positions earlier")
    )
    cases.append(
        Case(
            ([1, 2] + list(range(10, 2010)) + [1, 2], 2),
            label="a bigram seen 2000 positions earlier",
        )
    )
    cases += _rate_real_cases()
    return [Case(c.args, c.kwargs, c.label, compare=number_close()) for c in cases] + raises_case(
        "ValueError", [1, 2, 3], -1, label="n=-1 must raise ValueError"
    )


def _copies(g: torch.Generator, L: int, spans: list[int], far: int = 300) -> list[int]:
    """L ids over V = 49152 (random ids almost never repeat) into which stretches of the given
    lengths are copied from at least ``far`` positions earlier: each copy repeats the n-grams with n
    <= its length, and no longer one."""
    ids = _seq(g, L, 49152)
    for span in spans:
        dst = _int(g, far + span, L - span)
        src = _int(g, 0, dst - far - span)
        ids[dst : dst + span] = ids[src : src + span]
    return ids


def _rate_real_cases() -> list[Case]:
    """n clamped to 5 kept full points (every case had n <= 5; bug zoo:
    `repetition_rate__n_clamped_to_5`). Thousands of ids over V = 49152 where
    many stretches of 6 repeat (every 5-gram in them is a repeat) but few longer ones."""
    g = _g(511)
    return [
        Case(
            (_copies(g, 3000, [6] * 40 + [12] * 5), 8),
            label="3000 ids over 49152, 40 copied 6-grams, 5 12-grams, n=8",
        ),
        Case(
            (_copies(g, 2000, [7] * 30 + [15] * 8), 10),
            label="2000 ids over 49152, 30 copied 7-grams, 8 15-grams, n=10",
        ),
        Case(
            (torch.tensor(_copies(g, 2500, [5] * 50 + [9] * 10)), 6),
            label="1-D LongTensor of 2500 ids over 49152, 50 copied 5-grams, 10 9-grams, n=6",
        ),
    ]


# ------------------------------------------------------------------------------------------
# exercise 2
def _rp_cases() -> list[Case]:
    """The hidden cases of rp.

    Why long: a table of cases, one per rule the text states, read one at a time; split, one
    exercise's cases would be scattered."""
    g, cases = _g(503), []
    for i in range(32):
        dtype, kind = _dtype_kind(i)
        B, V = _int(g, 1, 4), _int(g, 2, 40)
        L = _int(g, 0, 40)
        x = _logits(g, B, V, dtype, kind)
        h = _history(g, B, V, L)
        penalty = [0.5, 0.9, 1.2, 1.5, 2.0, 3.0][i % 6]
        kw: dict = {}
        if i % 2:
            kw["prompt_len"] = _int(g, 0, L)
            kw["count_prompt"] = bool(i % 4 == 1)
        if i % 3 == 0:
            kw["window"] = _int(g, 0, L + 3)
        # float64 logits: float64 accuracy (the text); one division or product rounds once
        rtol = {torch.float16: 1e-2, torch.bfloat16: 1e-2, torch.float64: 1e-12}.get(dtype, 1e-6)
        cases.append(
            Case(
                (x, h, penalty),
                kw,
                compare=logits_match(rtol=rtol),
                label=f"{kind} {str(dtype).removeprefix('torch.')} [{B}, {V}], L={L}, penalty "
                f"{penalty} {kw}",
            )
        )
    cases.append(
        Case(
            (torch.tensor([[1.0, -2.0, 3.0, 0.5]]), torch.tensor([[0, 1, 2, 3]]), 2.0),
            {"count_prompt": False},
            compare=logits_match(rtol=1e-6),
            label="count_prompt=False with the default prompt_len=0: every id counts",
        )
    )
    # only the last 12 ids looked at passed (bug zoo: `repetition_penalty__last_12_ids_only`); here
    # most penalised ids were seen long ago
    gl = _g(506)
    cases.append(
        Case(
            (
                torch.randn(2, 300, generator=gl),
                torch.randperm(300, generator=gl)[:200].reshape(2, 100),
                1.5,
            ),
            compare=logits_match(rtol=1e-6),
            label="float32 [2, 300], 100 distinct ids per row, penalty 1.5",
        )
    )
    # `if penalty == 1: return logits` hands back the caller's tensor (the text: a new tensor; bug
    # zoo: `repetition_penalty__penalty_one_returns_input`), and window=0 taken as "the whole
    # history" passed when no random case drew window 0 over a non-empty history
    # (`repetition_penalty__window_zero_is_all`)
    x, h = (
        torch.tensor([[1.0, -2.0, 3.0, 0.5], [0.0, 2.0, -1.0, 4.0]]),
        torch.tensor([[0, 1, 2, 1], [3, 3, 0, 2]]),
    )
    cases += [
        Case(
            (x, h, 1.0),
            compare=logits_match(rtol=1e-6),
            label="penalty 1.0: unchanged values, in a new tensor",
        ),
        Case(
            (x, h, 2.0),
            {"window": 0},
            compare=logits_match(rtol=1e-6),
            label="window=0: no id counted, unchanged values (not the whole history)",
        ),
    ]
    return (
        cases
        + _rp_real_cases()
        + raises_case(
            "ValueError",
            torch.zeros(1, 3),
            torch.tensor([[1]]),
            -1.0,
            label="penalty -1 must raise ValueError",
        )
        + raises_case(
            "ValueError",
            torch.zeros(1, 3),
            torch.tensor([[1]]),
            0.0,
            label="penalty 0 must raise ValueError",
        )
    )


def _real_history(
    g: torch.Generator, B: int, L: int, V: int = 49152, hot: int = 20
) -> torch.Tensor:
    """[B, L] ids over V: random plus ``hot`` ids, each repeated up to ~L/40 times at random places,
    early and late (counts in the tens to hundreds)."""
    h = torch.randint(0, V, (B, L), generator=g)
    for r in range(B):
        for t in torch.randint(0, V, (hot,), generator=g).tolist():
            where = torch.randint(0, L, (_int(g, 1, max(1, L // 40)),), generator=g)
            h[r, where] = t
    return h


# Sizes: an honest answer may build a one-hot table of the history ([B, L, V] int64, as the
# alternative `presence_frequency_penalty__one_hot_counts_clamped` does); the notebook's own
# histories are ~100 ids, so cases keep B * L * V * 8 bytes under ~160 MB: thousands of ids over a
# vocabulary of 512-1024, or a few hundred over SmolLM2's
# 49152.
def _rp_truth(
    x: torch.Tensor,
    ids: torch.Tensor,
    penalty: float,
    *,
    prompt_len: int = 0,
    count_prompt: bool = True,
    window: int | None = None,
) -> torch.Tensor:
    """The text's rule written out with Python sets, in float64 (not the reference): per row, the
    counted ids (all or after the prompt, then the last ``window``); each distinct one divided if >
    0, else multiplied."""
    out = x.double().clone()
    for b, row in enumerate(ids.tolist()):
        counted = row if count_prompt else row[prompt_len:]
        if window is not None:
            counted = counted[len(counted) - window :] if window < len(counted) else counted
        for t in set(counted):
            v = float(out[b, t])
            out[b, t] = v / penalty if v > 0 else v * penalty
    return out.to(x.dtype)


def _rp_real_cases() -> list[Case]:
    """Windows clamped to 64, penalties clamped to the cases' range [0.5, 3], and histories read
    over their last 256 ids kept full points (bug zoo: `repetition_penalty__window_capped_at_64`,
    `repetition_penalty__penalty_clamped`, `repetition_penalty__last_256_ids_without_window`).
    SmolLM2's vocabulary (V = 49152), histories of 1500-3000 ids, windows in
    the hundreds, penalties 10, 5, 1.3, 0.25 (the text refuses only penalty <= 0). Expected by
    construction (_rp_truth): [B, 49152] results stored would be ~0.5 MB a case."""
    g, cases = _g(512), []
    for B, V, L, penalty, kw, dtype in [
        (2, 512, 3000, 1.3, {}, torch.float32),
        (
            1,
            49152,
            400,
            5.0,
            {"prompt_len": 80, "count_prompt": False, "window": 250},
            torch.float32,
        ),
        (1, 49152, 300, 0.25, {"window": 200}, torch.float32),
        (2, 1024, 2000, 10.0, {"prompt_len": 100, "window": 700}, torch.float64),
    ]:
        x = (torch.randn(B, V, generator=g, dtype=torch.float64) * 3).to(dtype)
        x[torch.rand(B, V, generator=g) < 0.1] = -math.inf
        h = _real_history(g, B, L, V)
        rtol = 1e-12 if dtype == torch.float64 else 1e-6
        cases.append(
            Case(
                (x, h, penalty),
                kw,
                expected=_rp_truth(x, h, penalty, **kw),
                compare=logits_match(rtol=rtol),
                label=f"real size: {str(dtype).removeprefix('torch.')} [{B}, {V}], L={L}, penalty "
                f"{penalty} {kw}",
            )
        )
    return cases


# counts above 256: not integers bfloat16 can hold (8 bits)
PF_REPEATS = [0, 257, 0, 259, 300, 261, 263, 0]


def _pf_many_repeats() -> list[Case]:
    """Issue 38: tokens repeated 257-300 times, bfloat16 logits. The text: "Compute in float32 for
    float16/bfloat16 logits"; counts kept in bfloat16 round 257 to 256 (4 of these 8 values then
    land a rounding step off, 5 when everything is bfloat16)."""
    z = torch.tensor([[3.0, 1.5, -2.0, 0.25, 4.0, -0.5, 2.0, 1.0]]).bfloat16()
    hist = torch.cat([torch.full((c,), i, dtype=torch.long) for i, c in enumerate(PF_REPEATS)])
    hist = hist[torch.randperm(hist.numel(), generator=_g(531))][None]
    return [
        Case(
            (z, hist),
            {"frequency": 0.013},
            compare=half_match(),
            label="bfloat16 [1, 8], 1340 ids: tokens repeated 257 to 300 times (beyond bfloat16's "
            "integers), frequency 0.013",
        )
    ]


def _pf_cases() -> list[Case]:
    g, cases = _g(504), []
    for i in range(32):
        dtype, kind = _dtype_kind(i)
        B, V = _int(g, 1, 4), _int(g, 2, 40)
        L = _int(g, 0, 40)
        x = _logits(g, B, V, dtype, kind)
        h = _history(g, B, V, L)
        kw = {
            "presence": round(float(torch.empty(()).uniform_(-2, 2, generator=g)), 3),
            "frequency": round(float(torch.empty(()).uniform_(-2, 2, generator=g)), 3),
            "prompt_len": _int(g, 0, L),
        }
        if i % 5 == 4:
            del kw["presence"]
        half = dtype in (torch.float16, torch.bfloat16)  # the text: compute in float32, round once
        # float64 logits: float64 accuracy (the text); a few roundings of sums of a handful of terms
        f64 = (
            logits_match(rtol=1e-12, atol=1e-12)
            if dtype == torch.float64
            else logits_match(rtol=1e-6, atol=1e-5)
        )
        cases.append(
            Case(
                (x, h),
                kw,
                compare=half_match() if half else f64,
                label=f"{kind} {str(dtype).removeprefix('torch.')} [{B}, {V}], L={L}, {kw}",
            )
        )
    # counts capped at 3 passed (bug zoo: `presence_frequency_penalty__counts_capped_at_3`); here
    # ids occur up to 12 times
    gl = _g(507)
    cases.append(
        Case(
            (torch.randn(1, 8, generator=gl), torch.tensor([[1] * 12 + [2] * 7 + [3] * 4 + [5]])),
            {"presence": 0.5, "frequency": 0.25},
            compare=logits_match(rtol=1e-6, atol=1e-5),
            label="float32 [1, 8], counts 12, 7, 4, 1",
        )
    )
    # returning the input itself when both penalties are 0 (the text: a new tensor; bug zoo:
    # `presence_frequency_penalty__zero_penalties_return_input`)
    cases.append(
        Case(
            (torch.tensor([[1.0, -2.0, 3.0, 0.5]]), torch.tensor([[0, 1, 2, 2]])),
            {"presence": 0.0, "frequency": 0.0, "prompt_len": 1},
            compare=logits_match(rtol=1e-6, atol=1e-5),
            label="presence 0 and frequency 0: unchanged values, in a new tensor",
        )
    )
    return cases + _pf_real_cases()


def _pf_real_cases() -> list[Case]:
    """Answers that read histories over their last 64-256 ids (bug zoo:
    `presence_frequency_penalty__last_256_ids_only`) fail here: 3000 ids over V = 1024 and 450 over
    SmolLM2's 49152, counts in the tens to hundreds. Expected by construction: Python counts, the
    formula in float64, rounded once to float32 (penalties exact in binary, so the reference's
    float32 arithmetic differs only in its last bits)."""
    g, cases = _g(513), []
    for B, V, L, kw in [
        (2, 1024, 3000, {"presence": 1.5, "frequency": 0.375, "prompt_len": 300}),
        (1, 49152, 450, {"presence": -0.5, "frequency": 0.75, "prompt_len": 150}),
    ]:
        x = torch.randn(B, V, generator=g) * 3
        x[torch.rand(B, V, generator=g) < 0.1] = -math.inf
        h = _real_history(g, B, L, V)
        out = x.double().clone()
        for b, row in enumerate(h.tolist()):
            counts: dict[int, int] = {}
            for t in row[kw["prompt_len"] :]:
                counts[t] = counts.get(t, 0) + 1
            for t, c in counts.items():
                out[b, t] -= c * kw["frequency"] + kw["presence"]
        top = int(h[:, kw["prompt_len"] :].unique(return_counts=True)[1].max())
        cases.append(
            Case(
                (x, h),
                kw,
                expected=out.float(),
                compare=logits_match(rtol=1e-6, atol=1e-5),
                label=f"real size: float32 [{B}, {V}], L={L}, counts up to {top}, {kw}",
            )
        )
    return cases


PF_SMALL, PF_LARGE = "cost: V = 50, two rows of 8 ids", "cost: V = 5000, two rows of 800 ids"


def _pf_cost() -> list[Case]:
    """The text: "no Python loop over the vocabulary or over the history": the same work, in lines
    run, for a vocabulary 100 times larger and a history 100 times longer (bug zoo:
    `presence_frequency_penalty__python_loop_over_history`)."""
    g = torch.Generator().manual_seed(42)
    kw = {"presence": 0.5, "frequency": 0.25, "prompt_len": 3}
    cap = torch.Generator().manual_seed(44)
    short, long = (
        torch.randint(0, 49152, (2, 8), generator=cap),
        torch.randint(0, 50, (2, 20000), generator=cap),
    )
    return [
        Case(
            (torch.randn(2, 50, generator=g), torch.randint(0, 50, (2, 8), generator=g)),
            kw,
            label=PF_SMALL,
            count_steps=True,
            compare=logits_match(rtol=1e-6, atol=1e-5),
        ),
        Case(
            (torch.randn(2, 5000, generator=g), torch.randint(0, 5000, (2, 800), generator=g)),
            kw,
            label=PF_LARGE,
            count_steps=True,
            compare=logits_match(rtol=1e-6, atol=1e-5),
        ),
        Case(
            (torch.zeros(2, 49152), short),
            kw,
            label=PF_CAP_V,
            expected=_pf_by_bincount(short, 49152, kw),
            count_steps=True,
            compare=logits_match(rtol=1e-6, atol=1e-5),
        ),
        Case(
            (torch.zeros(2, 50), long),
            kw,
            label=PF_CAP_L,
            expected=_pf_by_bincount(long, 50, kw),
            count_steps=True,
            compare=logits_match(rtol=1e-6, atol=1e-5),
        ),
    ]


def _pf_by_bincount(history: torch.Tensor, vocab: int, kw: dict) -> torch.Tensor:
    """Zero logits penalised by counts of the generated ids (bincount, a second implementation)."""
    counts = torch.stack(
        [torch.bincount(r[kw["prompt_len"] :], minlength=vocab) for r in history]
    ).float()
    return -(counts * kw["frequency"]) - (counts > 0).float() * kw["presence"]


# ------------------------------------------------------------------------------------------
# exercise 4
def _ngram_cases() -> list[Case]:
    g, cases = _g(505), []
    for i in range(40):
        dtype, kind = _dtype_kind(i)
        # bans do not depend on the logits' values
        kind = "normal" if kind == "ties" else kind
        B, V = _int(g, 1, 4), _int(g, 2, 12)
        L = _int(g, 0, 40)
        n = _int(g, 1, 5)
        x = _logits(g, B, V, dtype, kind)
        h = _history(g, B, V, L)
        cases.append(
            Case((x, h, n), label=f"{str(dtype).removeprefix('torch.')} [{B}, {V}], L={L}, n={n}")
        )
    # the text: the prefix is a tuple of ids ((1, 23) is not (12, 3)): nothing is banned here (bug
    # zoo: `ban_repeated_ngrams__glued_digit_prefix`)
    cases.append(
        Case(
            (torch.zeros(1, 30), torch.tensor([[1, 23, 5, 12, 3]]), 3), label="multi-digit ids, n=3"
        )
    )
    # scanning only the last positions passed (bug zoo: `ban_repeated_ngrams__last_16_ids_only`);
    # here the prefix (5,) was last seen 60 ids back
    far = [5, 9] + [10 + (i % 80) for i in range(60)] + [5]
    cases.append(
        Case(
            (torch.zeros(1, 100), torch.tensor([far]), 2),
            label="n=2, the prefix seen 60 positions back",
        )
    )
    # a look-back cut just past the farthest visible case (test_twins.py); here 2000 positions back
    farther = [5, 9] + list(range(10, 2010)) + [5]
    cases.append(
        Case(
            (torch.zeros(1, 2010), torch.tensor([farther]), 2),
            label="n=2, the prefix seen 2001 positions back",
        )
    )
    return (
        [Case(c.args, c.kwargs, c.label, compare=logits_match()) for c in cases]
        + _ngram_real_cases()
        + raises_case(
            "ValueError",
            torch.zeros(1, 3),
            torch.tensor([[1, 2]]),
            0,
            label="n=0 must raise ValueError",
        )
    )


def _ngram_truth(x: torch.Tensor, ids: torch.Tensor, n: int) -> torch.Tensor:
    """The text's rule from the set of the row's n-grams (not the reference): ban t where prefix +
    (t,) is one."""
    out = x.clone()
    for b, row in enumerate(ids.tolist()):
        if len(row) < n:
            continue
        prefix = tuple(row[len(row) - n + 1 :])
        for gram in {tuple(row[i : i + n]) for i in range(len(row) - n + 1)}:
            if gram[:-1] == prefix:
                out[b, gram[-1]] = -math.inf
    return out


def _ngram_real_cases() -> list[Case]:
    """n clamped to 5 kept full points (every case had n <= 5; bug zoo:
    `ban_repeated_ngrams__n_clamped_to_5`). Rows of 2000-3000 ids over V = 49152
    whose last n-1 ids occurred before, hundreds of positions back, each time followed by another
    token; and near misses: stretches that end like the prefix in only its last 4 ids (a 5-gram ban,
    not an n-gram one)."""
    g, cases = _g(514), []
    for B, L, n in [(2, 3000, 8), (1, 2500, 10), (2, 2000, 6)]:
        h = torch.randint(0, 49152, (B, L), generator=g)
        for r in range(B):
            prefix = h[r, L - n + 1 :]
            # the whole prefix, then another token, far back
            for k in range(4):
                at = _int(g, 10, L - 400)
                h[r, at : at + n - 1] = prefix
            for k in range(6):  # only the prefix's last 4 ids
                at = _int(g, 10, L - 400)
                h[r, at + n - 5 : at + n - 1] = prefix[-4:]
        x = torch.randn(B, 49152, generator=g)
        cases.append(
            Case(
                (x, h, n),
                expected=_ngram_truth(x, h, n),
                compare=logits_match(),
                label=f"real size: float32 [{B}, 49152], L={L}, n={n}, the prefix 400-3000 ids "
                "back",
            )
        )
    return cases


COST_SMALL, COST_LARGE = "cost: V = 50, two rows of 80 ids", "cost: V = 5000, the same two rows"
RP_SMALL, RP_LARGE = (
    "cost: V = 50, two rows of 40 ids, penalty 1.3",
    "cost: V = 5000, the same rows, penalty 1.3",
)
# real size, capped in lines (Contract.cost_cap): a ratio between two cases can be met by padding
# both with busy work (bug zoo: `repetition_penalty__padded_vocab_loop`); a cap cannot. The answers
# run <= 335 lines on these cases; a loop over 49,152 tokens (or 40,000 history ids) runs at least
# that many. Their expected values are built here (a few lines each), not stored from the reference:
# rows of 49,152 values would add megabytes to the references
COST_CAP, RP_CAP = "cost: V = 49152, a row of 80 ids", "cost: V = 49152, two rows of 40 ids"
# presence/frequency: no loop over the vocabulary, nor over the history; one case for each size, so
# that an honest one_hot(ids, V) (alternative `presence_frequency_penalty__one_hot_counts`) stays
# small in both
PF_CAP_V, PF_CAP_L = "cost: V = 49152, two rows of 8 ids", "cost: V = 50, two rows of 20000 ids"
CAP_LINES = 16384


def _rp_cost() -> list[Case]:
    """The text: "No Python loop over the vocabulary": the same rows (a loop over them is allowed)
    under a vocabulary 100 times larger (bug zoo: `repetition_penalty__vocab_loop_on_cpu`)."""
    g = torch.Generator().manual_seed(43)
    rows = torch.randint(0, 50, (2, 40), generator=g)
    small, large = torch.randn(2, 50, generator=g), torch.randn(2, 5000, generator=g)
    real, divided = torch.ones(2, 49152), torch.ones(2, 49152)
    for b in range(2):
        # every seen token's positive logit, divided once
        divided[b, rows[b]] = torch.tensor(1.0) / 1.3
    return [
        Case((small, rows, 1.3), label=RP_SMALL, count_steps=True, compare=logits_match(rtol=1e-6)),
        Case((large, rows, 1.3), label=RP_LARGE, count_steps=True, compare=logits_match(rtol=1e-6)),
        Case(
            (real, rows, 1.3),
            label=RP_CAP,
            expected=divided,
            count_steps=True,
            compare=logits_match(rtol=1e-6),
        ),
    ]


def _ngram_cost() -> list[Case]:
    """O(L x n), not O(V) (the text): the same rows under a vocabulary 100 times larger."""
    g = torch.Generator().manual_seed(41)
    rows = torch.randint(0, 6, (2, 80), generator=g)
    small, large = torch.randn(2, 50, generator=g), torch.randn(2, 5000, generator=g)
    # 80 ids ending (1, 2), always followed by 3: only 3 is banned
    row = torch.tensor([[1, 2, 3] * 26 + [1, 2]])
    real, banned_3 = torch.zeros(1, 49152), torch.zeros(1, 49152)
    banned_3[0, 3] = float("-inf")
    return [
        Case((small, rows, 3), label=COST_SMALL, count_steps=True),
        Case((large, rows, 3), label=COST_LARGE, count_steps=True),
        Case((real, row, 3), label=COST_CAP, expected=banned_3, count_steps=True),
    ]


# Generated cases (autograde.generated): {check: (a name in autograde.strategies.STRATEGIES, how
# many)}, drawn at release.
GENERATED = {
    "find_cycle_hidden": ("find_cycle_call", 24),
    "repetition_rate_hidden": ("repetition_rate_call", 24),
    "ban_repeated_ngrams_hidden": ("ban_repeated_ngrams_call", 24),
}


def _generated(check: str) -> list[Case]:
    from autograde import generated

    return generated.cases(ASSIGNMENT, check)


CHECKS = [
    Check(
        "find_cycle_hidden",
        "find_cycle",
        lambda: _cycle_cases() + _generated("find_cycle_hidden"),
        cycle_pair,
        hint="try periods 1, 2, ... in order; the periodic tail may end mid-cycle; count whole "
        "copies.",
    ),
    Check(
        "repetition_rate_hidden",
        "repetition_rate",
        lambda: _rate_cases() + _generated("repetition_rate_hidden"),
        number_close(),
        contract=Contract(number=True),
        hint="count n-grams already seen earlier in the same sequence, divided by the number of "
        "n-grams.",
    ),
    Check(
        "repetition_penalty_hidden",
        "repetition_penalty",
        lambda: _rp_cases() + _rp_cost(),
        logits_match(rtol=1e-6),
        contract=Contract(
            meta=True, cost=(RP_SMALL, RP_LARGE, 2.0), cost_cap=((RP_CAP, CAP_LINES),)
        ),
        hint="counted ids: all or ids[:, prompt_len:], then the last `window`; once per token; "
        "divide > 0, multiply <= 0.",
    ),
    Check(
        "presence_frequency_penalty_hidden",
        "presence_frequency_penalty",
        lambda: _pf_cases() + _pf_many_repeats() + _pf_cost(),
        logits_match(rtol=1e-6, atol=1e-5),
        contract=Contract(
            meta=True,
            cost=(PF_SMALL, PF_LARGE, 2.0),
            cost_cap=((PF_CAP_V, CAP_LINES), (PF_CAP_L, CAP_LINES)),
        ),
        hint="counts over the generated ids only, per row; bf16, -inf and negative penalties: "
        "half precision in float32 and return the input's dtype.",
    ),
    Check(
        "ban_repeated_ngrams_hidden",
        "ban_repeated_ngrams",
        lambda: _ngram_cases() + _generated("ban_repeated_ngrams_hidden") + _ngram_cost(),
        logits_match(),
        contract=Contract(cost=(COST_SMALL, COST_LARGE, 2.0), cost_cap=((COST_CAP, CAP_LINES),)),
        hint="ban every token that followed an earlier occurrence of the last n-1 ids, in that "
        "row.",
    ),
]

# Visible checks in disguise: outside the kernel their points need these too
# (autograde/hidden/_twins.py).
CHECKS += twins(
    _visible.CHECKS,
    {
        # fresh ids inside a history change no count of the others (penalties); inside an n-gram
        # history they break and make n-grams, which exposed honest slips as "lookups"
        # (test_twins.py): the ban and the rate are led only, and a visible case 300 ids long asks
        # for the whole history there
        **{
            name: {"kind": "vocab", "extend": True, "pad": True}
            for name in ("presence_frequency_penalty", "repetition_penalty")
        },
        "ban_repeated_ngrams": {"kind": "vocab", "extend": True},
        "find_cycle": {"kind": "ids"},
        "repetition_rate": {"kind": "ids"},
    },
)
