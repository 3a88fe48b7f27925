"""Hidden checks for notebook 03 (sampling strategies): many generated cases per exercise.

Expected values are the reference solutions' outputs (solutions/03_sampling), stored by
`python -m autograde release` in autograde/references/03_sampling.json, except for samplers:
- `sample`: the expected distribution is the case's own input (independent truth);
- `sample_next`: the truth is `sample_next_row_probs` in the solutions notebook, the distribution
that
  `sample_next` draws row 0 from (every row of these cases is identical, so one [V] vector per case
  is stored).

Inputs are seeded random batches of logits of six kinds: continuous, heavy ties (small integers),
-inf masks, a huge offset (1e4: exp overflows unless the max is subtracted), one dominant token, and
extreme values (+-3e38 in float32, +-6e4 in float16), in float32, float16, bfloat16 and float64,
with 1 to 3 batch dims.

Top-p and min-p cases are drawn again (same seed stream) whenever a token's decision lies within
1e-4 of the threshold in exact (float64) arithmetic: there, float32 and float64 implementations may
legitimately disagree. Cases where a prefix sums to exactly p are written by hand (dyadic
probabilities), where every correct implementation agrees. Tie choices are accepted by the
comparator (see course_lib.checks.sampling).
"""

from __future__ import annotations

import math
from dataclasses import replace

import torch

from autograde.hidden._twins import twins
from course_lib.checks import sampling as _visible
from course_lib.checks.engine import Case, Check, Contract, Generator, exact
from course_lib.checks.sampling import (
    FALSE_FAIL,
    GREEDY_FORBIDDEN,
    HF_FORBIDDEN,
    SAMPLE_FORBIDDEN,
    _keep,
    boolean,
    filtered,
    log_probs,
    number_close,
    raises_case,
    sampler_fit,
    sampler_leak,
    sampler_strict,
)

ASSIGNMENT = "03_sampling"
MARGIN = 1e-4  # min distance of any top-p / min-p decision from its threshold
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
KINDS = ["normal", "ties", "neg_inf", "huge", "peaked", "extreme"]


def _g(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _rand_logits(
    g: torch.Generator, shape: tuple[int, ...], dtype: torch.dtype, kind: str
) -> torch.Tensor:
    """Seeded logits of one kind (see module docstring); every row keeps at least one finite
    entry."""
    V = shape[-1]
    scale = float(torch.empty(()).uniform_(0.5, 6.0, generator=g))
    x = torch.randn(shape, generator=g, dtype=torch.float64) * scale
    if kind == "ties":
        x = torch.round(x / scale * 1.5)
    elif kind == "neg_inf":
        mask = torch.rand(shape, generator=g) < 0.35
        mask[..., int(torch.randint(0, V, (), generator=g))] = False
        x = x.masked_fill(mask, -math.inf)
    elif kind == "huge":
        x = x + 1e4
    elif kind == "peaked":
        x[..., int(torch.randint(0, V, (), generator=g))] += 15.0
    elif kind == "extreme":
        big = 6e4 if dtype == torch.float16 else 3e38
        pick = torch.rand(shape, generator=g)
        x = torch.where(
            pick < 0.15,
            torch.full_like(x, big),
            torch.where(pick > 0.8, torch.full_like(x, -big), x),
        )
    return x.to(dtype)


def _shape(g: torch.Generator, max_v: int = 40) -> tuple[int, ...]:
    V = int(torch.randint(2, max_v + 1, (), generator=g))
    nd = int(torch.randint(0, 3, (), generator=g))
    return tuple(int(torch.randint(1, 4, (), generator=g)) for _ in range(nd)) + (V,)


def _probs64(x: torch.Tensor) -> torch.Tensor:
    """Exact-ish probabilities of the (dtype-rounded) logits, rows flattened: [R, V] float64."""
    return torch.softmax(x.double().reshape(-1, x.shape[-1]), dim=-1)


def _top_p_margin(x: torch.Tensor, p: float) -> float:
    probs = torch.sort(_probs64(x), dim=-1, descending=True).values
    before = probs.cumsum(-1) - probs
    return float((before - p).abs().min())


def _min_p_margin(x: torch.Tensor, min_p: float) -> float:
    probs = _probs64(x)
    ratio = probs / probs.amax(dim=-1, keepdim=True)
    return float((ratio - min_p).abs().min())


def _safe(x: torch.Tensor, margin_of, threshold: float) -> torch.Tensor:
    """``x`` itself, after asserting that no decision of a hand-made case sits on the threshold."""
    assert margin_of(x, threshold) >= MARGIN, "hand-made case too close to its threshold"
    return x


def _random_cases(seed: int, n: int, make) -> list[Case]:
    """n cases from `make(g, i) -> Case | None` (None: draw again), all from one seeded stream."""
    g, out, i = _g(seed), [], 0
    while len(out) < n:
        case = make(g, i)
        if case is not None:
            out.append(case)
            i += 1
    return out


def _label(x: torch.Tensor, kind: str, extra: str) -> str:
    return f"{kind} {str(x.dtype).removeprefix('torch.')} {list(x.shape)}, {extra}"


def _kind_dtype(i: int) -> tuple[str, torch.dtype]:
    return KINDS[i % len(KINDS)], DTYPES[(i // len(KINDS)) % len(DTYPES)]


# ------------------------------------------------------------------------------ real sizes
# (test_realsize_03.py) Every case below this block has V <= ~4096 (twins included) and k <= 64:
# answers right only there (argmax over the first 8192 ids, k capped at 64, top-p over the 4096
# largest logits, min-p keeping at most 256, temperature skipped above 4096 tokens, a penalty over
# the last 64 ids, filters skipped above 4096 tokens: the bug zoo's `greedy__first_8192_ids_only`,
# `top_k_filter__k_capped_at_64`, ...; a red team's) kept full points. These cases have the course
# model's vocabulary (SmolLM2: 49 152 tokens), hundreds of kept tokens and histories of hundreds of
# ids, with the tokens that decide the answer anywhere in the id range (a third above 32 768). Each
# case carries its own expected value, planted by construction (which ids survive is decided when
# the input is written, not computed by a filter), so nothing is stored: a [49152] row of -inf alone
# would be ~400 KB of references. Logits are short dyadic numbers (integers, or multiples of 1/16):
# a float32 value written in full takes ~20 characters of JSON on its way to the sandbox, these take
# 4 to 8.
V_REAL = 49_152


def _dyadic(x: torch.Tensor, step: float = 1 / 16) -> torch.Tensor:
    """x rounded to a multiple of ``step`` (a power of 2): exact in every float dtype used here,
    short in JSON."""
    return torch.round(x / step) * step


def _spread(g: torch.Generator, n: int) -> torch.Tensor:
    """n distinct ids drawn at random from the whole vocabulary (about a third of them above 32
    768)."""
    return torch.randperm(V_REAL, generator=g)[:n]


def _greedy_real_cases() -> list[Case]:
    # integers: many ties below
    x = _dyadic(torch.randn(4, V_REAL, generator=_g(501)) * 2, 1.0).clamp(-10, 10)
    x[0, 40000] = 20.0
    x[1, 45000] = x[1, 33001] = 20.0  # a tie: the lowest id
    x[2, 49151] = 20.0  # the last id
    x[3, 8192] = 20.0  # the first id past 8192
    return [
        Case(
            (x[:2],),
            label="float32 [2, 49152] (SmolLM2's vocabulary): maxima at ids 40000, 33001 (tied "
            "with 45000)",
            expected=torch.tensor([40000, 33001]),
        ),
        Case(
            (x[2:].bfloat16(),),
            label="bfloat16 [2, 49152]: maxima at ids 49151 and 8192",
            expected=torch.tensor([49151, 8192]),
        ),
    ]


def _top_k_real_cases() -> list[Case]:
    g, cases = _g(502), []
    for dtype, k, R in [(torch.float32, 300, 2), (torch.bfloat16, 128, 1)]:
        # the others: -6..-1
        x = _dyadic(-1.0 - 5.0 * torch.rand(R, V_REAL, generator=g, dtype=torch.float64), 1.0)
        kept = []
        for r in range(R):
            ids = _spread(g, k + 2)
            # k - 3 values in [1, 9] above five tied at 0.5: the k-th largest is 0.5, and all five
            # are kept
            x[r, ids[: k - 3]] = torch.linspace(1.0, 9.0, k - 3, dtype=torch.float64)
            x[r, ids[k - 3 :]] = 0.5
            kept.append(ids.tolist())
        x = x.to(dtype)
        cases.append(
            Case(
                (x, k),
                label=f"{str(dtype).removeprefix('torch.')} [{R}, 49152], k={k}: {k - 3} larger "
                f"values, then 5 tied at the k-th ({k + 2} kept, ids up to 49151)",
                expected=_keep(x, kept),
            )
        )
    return cases


def _top_p_real_cases() -> list[Case]:
    g = _g(503)
    # row 0: a nucleus of 4100 tokens (more than 4096) sharing 0.95 within 0.5 % of each other, 45
    # 052 sharing 0.05; row 1: five tokens above id 32 768 hold 0.97, p keeps all five (the fifth
    # crosses p), 0.03 spread thin
    q = torch.empty(2, V_REAL, dtype=torch.float64)
    nucleus = _spread(g, 4100)
    w = 1 + 0.005 * (2 * torch.rand(4100, generator=g, dtype=torch.float64) - 1)
    q[0] = 0.05 / (V_REAL - 4100)
    q[0, nucleus] = 0.95 * w / w.sum()
    head = 32768 + torch.randperm(V_REAL - 32768, generator=g)[:5]
    q[1] = 0.03 / (V_REAL - 5)
    q[1, head] = torch.tensor([0.45, 0.25, 0.15, 0.08, 0.04], dtype=torch.float64)
    x = q.log()
    # the nucleus keeps its spread in full float32 digits: 4100 *equal* values summed one by one in
    # float32 drift by up to 2e-4, past the margin (rounding errors of distinct values do not pile
    # up)
    x = torch.where(q > 1e-4, x, _dyadic(x)).float()
    # p halfway between the mass before the nucleus's smallest token and the mass before the first
    # token outside it (exact arithmetic on the float32 logits; ~1.2e-4 from each, asserted >=
    # MARGIN)
    before = torch.sort(_probs64(x[:1]), dim=-1, descending=True).values.cumsum(-1)[0]
    p = float(before[4098] + before[4099]) / 2
    return [
        Case(
            (_safe(x, _top_p_margin, p), p),
            label=f"float32 [2, 49152], p={p:.6f}: a nucleus of 4100 tokens; "
            "five tokens above id 32768",
            expected=_keep(x, [nucleus.tolist(), head.tolist()]),
        )
    ]


def _min_p_real_cases() -> list[Case]:
    g = _g(504)
    x, kept = torch.empty(2, V_REAL, dtype=torch.float64), []
    for r in range(2):
        ids = _spread(g, V_REAL)
        # the top token; 3000 more at 0.07 to 0.9 of it, the rest below 0.03
        x[r, ids[0]] = 0.0
        x[r, ids[1:3001]] = math.log(0.07) + math.log(0.9 / 0.07) * torch.rand(
            3000, generator=g, dtype=torch.float64
        )
        x[r, ids[3001:]] = math.log(0.03) - 8 * torch.rand(
            V_REAL - 3001, generator=g, dtype=torch.float64
        )
        kept.append(ids[:3001].tolist())
    # moves a ratio by 3 % at most: >= 0.068 kept, <= 0.031 removed
    x = _dyadic(x).float()
    y = torch.empty(1, V_REAL, dtype=torch.float64)
    ids = _spread(g, V_REAL)
    y[0, ids[:3]] = torch.tensor([0.0, -0.1, -0.2], dtype=torch.float64)  # above 0.5 of the top
    # below 0.37 of it, distinct
    y[0, ids[3:300]] = torch.linspace(-1.0, -5.0, 297, dtype=torch.float64)
    y[0, ids[300:]] = _dyadic(-6.0 - 6 * torch.rand(V_REAL - 300, generator=g, dtype=torch.float64))
    y = y.float()
    return [
        Case(
            (_safe(x, _min_p_margin, 0.05), 0.05),
            label="float32 [2, 49152], min_p=0.05: 3001 tokens at >= 0.06 of the top kept",
            expected=_keep(x, kept),
        ),
        Case(
            (_safe(y, _min_p_margin, 0.5), 0.5),
            {"min_tokens_to_keep": 300},
            label="float32 [1, 49152], min_p=0.5 passes 3 tokens, min_tokens_to_keep=300 keeps 300",
            expected=_keep(y, [ids[:300].tolist()]),
        ),
    ]


def _temperature_real_cases() -> list[Case]:
    g = _g(505)
    x = _dyadic(torch.randn(2, V_REAL, generator=g) * 3).clamp(-15, 15)
    x[:, _spread(g, 500)] = -math.inf
    x[0, 41000] = 20.0
    x[1, 36000] = x[1, 47000] = 20.0
    return [
        Case(
            (x, 0.5),
            label="float32 [2, 49152], T=0.5: every logit doubled (exact)",
            expected=x * 2,
            compare=filtered(rtol=1e-6),
        ),
        Case(
            (x, 0),
            label="float32 [2, 49152], T=0: only ids 41000 / 36000 and 47000 (tied) stay",
            expected=_keep(x, [[41000], [36000, 47000]]),
        ),
    ]


def _penalty_truth(x: torch.Tensor, history: torch.Tensor, penalty: float) -> torch.Tensor:
    """The CTRL rule written out token by token over each row's set of seen ids (float64, then x's
    dtype)."""
    z = x.double().clone()
    for r in range(z.shape[0]):
        for i in set(history[r].tolist()):
            z[r, i] = z[r, i] / penalty if z[r, i] > 0 else z[r, i] * penalty
    return z.to(x.dtype)


def _penalty_real_cases() -> list[Case]:
    g = _g(506)
    x = _dyadic(torch.randn(2, V_REAL, generator=g) * 3)
    # 600 ids per row, the whole id range
    hist = torch.randint(0, V_REAL, (2, 600), generator=g)
    return [
        Case(
            (x, hist, 1.3),
            label="float32 [2, 49152], 600 previous ids per row over the whole vocabulary, "
            "penalty 1.3",
            expected=_penalty_truth(x, hist, 1.3),
            compare=filtered(rtol=1e-6),
        )
    ]


def _sample_next_real_cases() -> list[Case]:
    g, n = _g(507), 4
    ids = _spread(g, V_REAL)
    head = ids[:300]
    # 48 852 tokens at 0, -1, ..., -4
    x = -torch.randint(0, 5, (V_REAL,), generator=g).double()
    # 300 in [1, 3]: top-k = 300 keeps them
    x[head] = _dyadic(1 + 2 * torch.rand(300, generator=g, dtype=torch.float64))
    x = x.float()
    # 60 of them seen, and 140 others
    hist = torch.cat([head[:60], ids[300:440]])
    # the distribution, written out: penalty (positive / 1.3, negative * 1.3; the 300 stay above
    # every other token), T = 0.8, then top-k = 300 keeps exactly the 300
    z = x.double().clone()
    z[hist] = torch.where(z[hist] > 0, z[hist] / 1.3, z[hist] * 1.3)
    probs = torch.zeros(V_REAL, dtype=torch.float64)
    probs[head] = torch.softmax(z[head] / 0.8, dim=-1)
    settings = {
        "temperature": 0.8,
        "top_k": 300,
        "repetition_penalty": 1.3,
        "previous_ids": hist.expand(n, -1).clone(),
    }
    return [
        Case(
            (x.expand(n, V_REAL).clone(), Generator(430)),
            settings,
            expected=probs,
            repeat=64,
            label=f"[{n}, 49152] identical rows x 64 calls, penalty 1.3 on 200 ids, T=0.8, "
            "top_k=300",
        )
    ]


def _sample_real_cases(ff: float = FALSE_FAIL / 14) -> list[Case]:
    """sample: independence of consecutive draws, and a real model's thin tail (bug zoo:
    `sample__weyl_sequence_rows`, `sample__drops_below_2e-3`). ``ff``: each case's
    share of the check's false-fail budget."""
    g = _g(508)
    four = torch.tensor([0.4, 0.3, 0.2, 0.1])
    # a real model's shape: 10 tokens hold 0.5, 500 tokens 5e-4 each (0.25), 48 642 tokens 5.1e-6
    # each (0.25); ids at random. Bins: the three classes x four ranges of 12 288 ids (so the tail's
    # bins hold 1/16 each).
    ids = _spread(g, V_REAL)
    cls = torch.full((V_REAL,), 2, dtype=torch.long)
    cls[ids[:10]], cls[ids[10:510]] = 0, 1
    tail = torch.tensor([0.05, 5e-4, 0.25 / (V_REAL - 510)], dtype=torch.float64)[cls].float()
    bins = cls * 4 + torch.arange(V_REAL) // 12288
    return [
        Case(
            (four.expand(4000, 4).clone(), Generator(305)),
            label="[4000, 4] identical rows: consecutive rows independent",
            expected=four.expand(4000, 4).clone(),
            compare=sampler_strict(ff, pairs=True),
        ),
        Case(
            (four, Generator(306)),
            label="[4] vector, 1000 calls with one generator: consecutive calls independent",
            expected=four,
            repeat=1000,
            compare=sampler_strict(ff, pairs=True),
        ),
        Case(
            (tail, Generator(307)),
            label="[49152] vector, 600 calls: half the mass on 49 142 tokens below 1e-3, "
            "a quarter below 1e-5",
            expected=tail,
            repeat=600,
            compare=sampler_strict(ff, bins=bins),
        ),
    ]


# ------------------------------------------------------------------- removed tokens leaking (issue
# 38) A sample_next that gives a removed token (filtered out: probability 0) a chance q of ~1e-5 per
# draw is never seen in a few thousand draws. This case draws 7e5 times (3500 identical rows x 200
# calls with one generator; inputs stay small for the sandbox) from one small distribution: a
# correct sampler never returns a removed token, so that part of the test cannot fail a correct
# answer (the case's only false-fail chance is the Chernoff test of the kept tokens, within the
# check's budget of 1e-6). A sampler whose removed token has q >= 1e-5 per draw returns it at least
# once with probability >= 1 - (1 - 1e-5)^7e5 = 1 - e^-7 = 0.9991 (q = 3e-5: 1 - 8e-10). 7e5, not
# more: the reference's five steps cost ~1.5 us a row. `sample` removes nothing itself (its zeros
# come with its input, and the seeded cases put u at the top and bottom of the CDF next to zeros); a
# 7e5-draw case there cost an honest row-by-row answer ~20 s.
LEAK_ROWS, LEAK_CALLS = 3500, 200
# short in JSON: 4 characters a value
LEAK_LOGITS = [3.0, 2.0, 1.0, 0.0, -1.0, -2.0, -3.0, -4.0]
LEAK_SETTINGS = {"top_k": 3, "top_p": 0.8, "min_p": 0.3}
# top-k = 3 keeps softmax([3, 2, 1]) = [.665, .245, .090]; top-p = 0.8: the mass before the third is
# .910 >= 0.8, removed (before the second: .665 < 0.8, kept); min-p = 0.3 keeps the second (e^-1 =
# .368 of the top): softmax([3, 2]) = [e / (e + 1), 1 / (e + 1)], six removed tokens (by two steps);
# every decision >= 0.068 from its threshold
LEAK_NEXT_PROBS = [math.e / (math.e + 1), 1 / (math.e + 1), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]


def _sample_next_leak_case(ff: float) -> Case:
    rows = torch.tensor(LEAK_LOGITS).expand(LEAK_ROWS, 8).clone()
    return Case(
        (rows, Generator(322)),
        dict(LEAK_SETTINGS),
        repeat=LEAK_CALLS,
        compare=sampler_leak(ff),
        expected=torch.tensor(LEAK_NEXT_PROBS, dtype=torch.float64),
        label=f"[{LEAK_ROWS}, 8] identical rows x {LEAK_CALLS} calls (7e5 draws), top_k=3, "
        "top_p=0.8, min_p=0.3: the 6 removed tokens are never drawn, not even once in 1e5",
    )


# ------------------------------------------------------------------------------------------
# exercise 1
def _greedy_cases() -> list[Case]:
    def make(g, i):
        kind, dtype = _kind_dtype(i)
        x = _rand_logits(g, _shape(g), dtype, kind)
        return Case((x,), label=_label(x, kind, "argmax"))

    return _random_cases(101, 24, make) + _greedy_real_cases() + _greedy_near_tie_cases()


def _ulps_above(x: float, n: int) -> float:
    """The float32 value n steps (units in the last place) above x."""
    v = torch.tensor(x, dtype=torch.float32)
    for _ in range(n):
        v = torch.nextafter(v, torch.tensor(math.inf))
    return float(v)


def _greedy_near_tie_cases() -> list[Case]:
    """Maxima a few float32 ulps apart (at ~10), the larger one not first. An argmax over rounded
    probabilities (softmax, then float16) sees a tie there and answers the lower id; the text's
    argmax of the logits does not (bug zoo: `greedy__argmax_of_float16_probs`)."""
    u1, u2, u3, u4 = (_ulps_above(10.0, n) for n in (1, 2, 3, 4))
    x = torch.tensor([[10.0, u2, 0.0, -3.0], [-1.0, 9.5, 10.0, u3], [u1, 4.0, u4, 2.0]])
    # integers below 10
    big = _dyadic(torch.randn(1, V_REAL, generator=_g(509)) * 2, 1.0).clamp(-10, 8)
    # below id 8192, so that `greedy__first_8192_ids_only` (bug zoo) stays caught by the real-size
    # cases alone (autograde/tests/test_realsize_03.py); the 49 152-token softmax still rounds the
    # three to one float16 value
    big[0, 1000], big[0, 3500], big[0, 7000] = u1, 10.0, u3
    return [
        Case(
            (x,),
            label="float32 [3, 4]: the two largest logits 1 to 3 ulps apart near 10, the larger "
            "not first",
        ),
        Case(
            (big,),
            label="float32 [1, 49152]: 10 + 1 ulp at id 1000, 10 at 3500, 10 + 3 ulps at 7000",
            expected=torch.tensor([7000]),
        ),
    ]


def _sample_cases() -> list[Case]:
    """The hidden cases of sample.

    Why long: a table of cases, one per rule the text states, read one at a time; split, one
    exercise's cases would be scattered."""
    g = _g(102)
    cases = []
    # One distribution, many rows: Dirichlet-like with exact zeros.
    for V, zeros in [(10, 3), (6, 0), (25, 10)]:
        p = -torch.log(torch.rand(V, generator=g))  # exponential weights
        p[torch.randperm(V, generator=g)[:zeros]] = 0.0
        p = (p / p.sum()).float()
        n = 3000
        cases.append(
            Case(
                (p.expand(n, V).clone(), Generator(200 + V)),
                label=f"[{n}, {V}] identical rows, {zeros} zeros",
                expected=p.expand(n, V).clone(),
            )
        )
    # Three distributions interleaved row by row: every row must get its own random number.
    d = torch.tensor(
        [[0.6, 0.4, 0.0, 0.0], [0.0, 0.1, 0.1, 0.8], [0.25, 0.25, 0.25, 0.25]], dtype=torch.float64
    )
    inter = d.repeat(1000, 1)  # rows 0, 1, 2, 0, 1, 2, ...
    cases.append(
        Case(
            (inter, Generator(301)),
            label="float64 [3000, 4]: three distributions interleaved row by row",
            expected=inter,
        )
    )
    # 3-D batch.
    three = d.float().repeat(500, 1).reshape(500, 3, 4)
    cases.append(Case((three, Generator(302)), label="3-D batch [500, 3, 4]", expected=three))
    # A [V] vector, many calls: a Zipf tail over 100 tokens.
    zipf = torch.tensor([1.0 / r for r in range(1, 101)])
    zipf = zipf / zipf.sum()
    cases.append(
        Case(
            (zipf, Generator(303)),
            label="Zipf over 100 tokens, [V] vector, 3000 calls",
            expected=zipf,
            repeat=3000,
        )
    )
    # the text: one id per row, shape [...]: a batch of one row keeps its batch dimension ([1, V] ->
    # [1], not a 0-dim tensor; bug zoo: `sample__squeezes_batch_of_one`)
    one = torch.tensor([[0.25, 0.0, 0.5, 0.25]])
    cases.append(
        Case(
            (one, Generator(309)),
            label="[1, 4] batch of one row, 400 calls: ids of shape [1]",
            expected=one,
            repeat=400,
        )
    )
    # Nearly one-hot with a tiny but nonzero tail.
    tiny = torch.tensor([1 - 3e-4, 1e-4, 1e-4, 1e-4], dtype=torch.float64)
    cases.append(
        Case(
            (tiny.expand(4000, 4).clone(), Generator(304)),
            label="[1 - 3e-4, 1e-4 x 3], 4000 rows",
            expected=tiny.expand(4000, 4).clone(),
        )
    )
    # The text's two details, at the edges where they matter. Rows sum to 1 - 2^-23 (float32
    # rounding: the text's
    # 0.99999994 is one step closer), the first and last tokens have probability 0, and each
    # generator seed was found by a search over seeds (autograde/tests/test_sample_edges.py holds
    # each one's value) so that its stream of 4000 uniforms holds the one value that exposes a
    # mistake:
    #   u = 1 - 2^-24 (float32) or u > 1 - 2^-23 (float64), above the unscaled total: "first c_i >
    #   u" finds none, and an answer that does not scale u by the total returns V or, clamped, the
    #   last (zero) token; u = 0 exactly (float32): "first c_i >= u" (searchsorted's default
    #   right=False) returns token 0, whose probability is 0; the text's "first c_i > u" skips it.
    edge = torch.tensor(
        [0.0, 0.5, 0.25, 0.125, 0.0625, 0.0625 - 2.0**-23, 0.0, 0.0], dtype=torch.float32
    )
    for seed, what in [
        (2918, "float32 u = 1 - 2^-24 at row 3237"),
        (286, "float64 u > 1 - 2^-23 at row 1678"),
        (2313, "float32 u = 0 at row 3997"),
    ]:
        rows = edge.expand(4000, 8).clone()
        cases.append(
            Case(
                (rows, Generator(seed)),
                label=f"[4000, 8] rows summing to 1 - 2^-23, p = 0 first and last; "
                f"seed {seed}: {what}",
                expected=rows.clone(),
            )
        )
    ff = FALSE_FAIL / (len(cases) + len(_sample_real_cases()))
    return [
        Case(c.args, c.kwargs, c.label, c.expected, sampler_fit(ff), c.repeat) for c in cases
    ] + _sample_real_cases(ff)


# ------------------------------------------------------------------------------------------
# exercise 2
def _top_k_cases() -> list[Case]:
    def make(g, i):
        kind, dtype = _kind_dtype(i)
        x = _rand_logits(g, _shape(g), dtype, kind)
        k = int(torch.randint(1, x.shape[-1] + 3, (), generator=g))
        return Case((x, k), label=_label(x, kind, f"k={k}"))

    cases = _random_cases(103, 36, make)
    wide = _rand_logits(_g(104), (2, 512), torch.float32, "ties")
    cases.append(Case((wide, 40), label="ties float32 [2, 512], k=40 (ties at the 40th value)"))
    # float64 logits closer than float32 can tell apart: a threshold found or compared in float32
    # ties them (bug zoo: `top_k_filter__float32_threshold`); the text keeps logits >= the row's
    # k-th largest, in the input's dtype
    near = torch.tensor(
        [[1.0, 1.0 + 1e-12, 0.5, -2.0], [0.25, 3.0 - 2e-12, 3.0, 3.0 - 1e-12]], dtype=torch.float64
    )
    cases.append(Case((near, 1), label="float64 logits 1e-12 apart, k=1: only the largest kept"))
    cases += raises_case("ValueError", wide, 0, label="k=0 must raise ValueError")
    cases += raises_case("ValueError", wide, -3, label="k=-3 must raise ValueError")
    cases += raises_case("ValueError", wide, 2.5, label="k=2.5 must raise ValueError")
    return cases + _top_k_real_cases()


# ------------------------------------------------------------------------------------------
# exercise 3 issue 38: every logit large and negative
NEG_ROW = torch.tensor([[-1e4, -1e4 - 1, -1e4 - 3, -1e4 - 40]])


def _top_p_cases() -> list[Case]:
    """The hidden cases of top_p.

    Why long: a table of cases, one per rule the text states, read one at a time; split, one
    exercise's cases would be scattered."""

    def make(g, i):
        kind, dtype = _kind_dtype(i)
        x = _rand_logits(g, _shape(g), dtype, kind)
        p = round(float(torch.rand((), generator=g)) * 0.98 + 0.01, 3)
        m = int(torch.randint(1, 4, (), generator=g)) if i % 3 == 0 else 1
        if _top_p_margin(x, p) < MARGIN:
            return None
        kw = {"min_tokens_to_keep": m} if m != 1 else {}
        return Case(
            (x, p),
            kw,
            label=_label(x, kind, f"p={p}" + (f", min_tokens_to_keep={m}" if kw else "")),
        )

    cases = _random_cases(105, 40, make)
    # Exact boundaries: dyadic probabilities (every prefix sum exact in float32; float64 arithmetic
    # on the same float32 logits lands on the same side, checked) and tied rows (exact in every
    # precision).
    exact = torch.stack(
        [
            log_probs([0.25, 0.5, 0.125, 0.125]),
            log_probs([0.125, 0.125, 0.25, 0.5]),
            log_probs([0.5, 0.125, 0.25, 0.125]),
        ]
    )
    for p in (0.5, 0.75, 0.875):
        cases.append(Case((exact, p), label=f"dyadic rows, p={p}: a prefix sums to exactly p"))
    cases.append(
        Case((torch.zeros(3, 8), 0.25), label="eight tied tokens at 1/8, p=0.25: exactly 2 kept")
    )
    cases.append(Case((exact.double(), 0.75), label="float64 dyadic rows, p=0.75"))
    wide = _rand_logits(_g(106), (2, 256), torch.float32, "normal")
    cases.append(Case((_safe(wide, _top_p_margin, 0.9), 0.9), label="float32 [2, 256], p=0.9"))
    cases.append(Case((wide, 1.0), label="p=1 keeps all 256"))
    # the text: p == 1 keeps every token (bug zoo: `top_p_filter__no_p1_shortcut`), even those whose
    # probability (1e-17 .. 2e-35) vanishes in the cumulative sum (a nucleus computed at p = 1 finds
    # the mass before them already 1 and drops them)
    tiny = torch.tensor([[-25.0, 12.0, -50.0, 3.0, 1.0], [0.5, -44.0, -18.0, 20.0, -60.0]])
    cases.append(
        Case(
            (tiny, 1.0), label="p=1 keeps all 5, even probabilities 1e-17 to 2e-35 (float32 [2, 5])"
        )
    )
    cases.append(
        Case(
            (tiny[:1].double(), 1.0),
            label="p=1 keeps all 5, even probability 1e-27 (float64 [1, 5])",
        )
    )
    cases.append(
        Case((wide, 0.0), {"min_tokens_to_keep": 2}, label="p=0 with min_tokens_to_keep=2")
    )
    # the text: p = 0 keeps exactly min_tokens_to_keep = 1 token, even when the maximum is tied
    # (bug zoo: `top_p_filter__p0_keeps_tied_max`)
    cases.append(
        Case(
            (torch.tensor([[2.0, 2.0, 0.0, -1.0], [1.0, 3.0, 3.0, 3.0]]), 0.0),
            label="p=0 with tied maxima: exactly one token per row (any of the tied ones)",
        )
    )
    cases.append(
        Case(
            (_safe(wide.bfloat16(), _top_p_margin, 0.5), 0.5),
            label="bfloat16 [2, 256], p=0.5 (compute in float32)",
        )
    )
    # the text: probabilities in float32, keep when M_j < p. A bfloat16 row whose cut moves when the
    # sums are taken in bfloat16 (float32 and float64 agree; the mass before the cut is 2e-3 from p;
    # bug zoo: `top_p_filter__softmax_in_input_dtype`), and a float64 row whose M_j is 5e-7 below p
    # (a "safety" epsilon drops it: `top_p_filter__epsilon_drops_boundary_token`)
    g = torch.Generator().manual_seed(2024)
    for _ in range(5):
        row = (torch.randn(1, 50, generator=g) * 2).bfloat16()
    cases.append(
        Case((row, 0.9), label="bfloat16 [1, 50], p=0.9: the cut moves if summed in bfloat16")
    )
    cases.append(
        Case(
            (torch.tensor([0.6, 0.3, 0.1], dtype=torch.float64).log(), 0.6000005),
            label="float64, M_2 = 0.6 just below p = 0.6000005: kept",
        )
    )
    # issue 38: a row whose logits are all large and negative (exp underflows to 0 for every token:
    # 0 / 0 = NaN unless the max is subtracted); probabilities .705 .259 .035 0, decisions >= 0.06
    # from p
    cases.append(
        Case(
            (_safe(NEG_ROW, _top_p_margin, 0.9), 0.9),
            label="float32 [1, 4] all near -1e4: [-1e4, -1e4 - 1, "
            "-1e4 - 3, -1e4 - 40], p=0.9 keeps 2 (exp underflows unless the max is subtracted)",
        )
    )
    cases += raises_case("ValueError", wide, -0.1, label="p=-0.1 must raise ValueError")
    cases += raises_case("ValueError", wide, 1.01, label="p=1.01 must raise ValueError")
    return cases + _top_p_real_cases()


# ------------------------------------------------------------------------------------------
# exercise 4
LN2 = math.log(2.0)
# p_i / p_max = exp(-0.6875) = 0.502826, 1.4e-4 below min_p: removed in any precision. Near 10^4
# float32 logits lie on a grid of 2^-10, and z_max + log(min_p) = 9999.312795 rounds to the token's
# own logit 9999.3125.
MIN_P_NEAR_GRID = 0.50297


def _min_p_threshold_cases() -> list[Case]:
    """The two forms the text rules out, each at the one place it differs from the probabilities
    (found by a blind author; bug zoo: `min_p_filter__logit_form_rounded_threshold`,
    `min_p_filter__strict_except_top`).

    "equal to the threshold kept": logits 0, -ln 2, -2 ln 2, ... give probabilities 1/2, 1/4, 1/8
    exactly (sums of powers of two; float64 ln 2 rounds to the float32 one in float32), so p_i =
    min_p * p_max holds exactly in float32 and float64, by softmax, exp(log_softmax) or a ratio
    alike; a strict > removes those tokens. "not the logit form": the logit form's threshold z_max +
    log(min_p) is rounded to the logits' grid; far from 0 that grid is coarse (2^-10 near 10^4 in
    float32) while z_i - z_max is exact, so probabilities decide cleanly where the logit form's
    rounding keeps a token (tests: test_min_p_edges.py)."""
    # 1/2, 1/4, 1/8, 1/8
    exact4 = torch.tensor([[0.0, -LN2, -2 * LN2, -2 * LN2]], dtype=torch.float64)
    # 8, 4, 2, 2, 1 / 17
    exact5 = torch.tensor([[0.0, -LN2, -2 * LN2, -2 * LN2, -3 * LN2]], dtype=torch.float64)
    big = torch.tensor([[10000.0, 10000.0 - 0.6875, 10000.0 - 3.0, 10000.0 - 0.5]])
    return [
        Case(
            (exact4, 0.5),
            label="float64, probabilities 1/2, 1/4, 1/8, 1/8 exactly, min_p=0.5: the token at "
            "exactly min_p * p_max is kept",
        ),
        Case(
            (exact5, 0.25),
            label="float64, probabilities 8/17, 4/17, 2/17, 2/17, 1/17, min_p=0.25: the tokens "
            "at exactly min_p * p_max are kept",
        ),
        Case(
            (_safe(big, _min_p_margin, MIN_P_NEAR_GRID), MIN_P_NEAR_GRID),
            label=f"float32 logits near 1e4, min_p={MIN_P_NEAR_GRID}: p_i / p_max = exp(-0.6875) "
            "= 0.50283 is below min_p: removed",
        ),
    ]


def _min_p_cases() -> list[Case]:
    """The hidden cases of min_p.

    Why long: a table of cases, one per rule the text states, read one at a time; split, one
    exercise's cases would be scattered."""

    def make(g, i):
        kind, dtype = _kind_dtype(i)
        x = _rand_logits(g, _shape(g), dtype, kind)
        mp = round(float(torch.rand((), generator=g)) * 0.5, 3)
        m = int(torch.randint(1, 4, (), generator=g)) if i % 4 == 0 else 1
        if _min_p_margin(x, mp) < MARGIN:
            return None
        kw = {"min_tokens_to_keep": m} if m != 1 else {}
        return Case(
            (x, mp),
            kw,
            label=_label(x, kind, f"min_p={mp}" + (f", min_tokens_to_keep={m}" if kw else "")),
        )

    cases = _random_cases(107, 30, make)
    # Ties with the top token are exactly at the threshold for min_p = 1, in any precision.
    ties = torch.tensor(
        [[1.0, 3.0, 3.0, 0.0, 3.0], [0.0, 0.0, 0.0, 0.0, 0.0], [5.0, -math.inf, 5.0, 4.0, 4.0]]
    )
    cases.append(Case((ties, 1.0), label="min_p=1 with tied top tokens: every tied token is kept"))
    cases.append(
        Case(
            (ties.bfloat16(), 1.0),
            {"min_tokens_to_keep": 4},
            label="min_p=1, bfloat16, min_tokens_to_keep=4",
        )
    )
    cases.append(Case((ties, 0.0), label="min_p=0 keeps all"))
    # bfloat16 logits whose probabilities, computed in bfloat16, cross the threshold the float32
    # ones do not (10-20x the margin of the random cases; found by a blind class writing min-p in
    # the input's dtype)
    cases.append(
        Case(
            (
                torch.tensor(
                    [
                        [
                            -2.78125,
                            -0.1943359375,
                            0.80859375,
                            -1.40625,
                            -3.28125,
                            2.828125,
                            2.046875,
                            1.84375,
                        ]
                    ],
                    dtype=torch.bfloat16,
                ),
                0.459,
            ),
            label="bfloat16, min_p=0.459: probabilities in float32, not bfloat16",
        )
    )
    cases.append(
        Case(
            (
                torch.tensor(
                    [
                        [
                            -1.8515625,
                            -1.6953125,
                            3.46875,
                            1.609375,
                            1.90625,
                            1.546875,
                            -2.234375,
                            2.546875,
                        ]
                    ],
                    dtype=torch.bfloat16,
                ),
                0.4,
            ),
            label="bfloat16, min_p=0.4: probabilities in float32, not bfloat16",
        )
    )
    # the text: keep p_i >= min_p * p_max: a token 5e-7 below the threshold is removed (a "safety"
    # epsilon kept it: bug zoo `min_p_filter__epsilon_keeps_below_threshold`)
    cases.append(
        Case(
            (torch.tensor([0.5, 0.0499995, 0.4500005], dtype=torch.float64).log(), 0.1),
            label="float64, p = 0.0499995 just below min_p * p_max = 0.05: removed",
        )
    )
    cases += _min_p_threshold_cases()
    wide = _rand_logits(_g(108), (2, 256), torch.float32, "normal")
    cases.append(
        Case((_safe(wide, _min_p_margin, 0.05), 0.05), label="float32 [2, 256], min_p=0.05")
    )
    cases.append(
        Case(
            (_safe(NEG_ROW, _min_p_margin, 0.1), 0.1),
            label="float32 [1, 4] all near -1e4, min_p=0.1 keeps 2 "
            "(ratios 1, .37, .05, 0: exp underflows unless the max is subtracted)",
        )
    )
    cases += raises_case("ValueError", wide, 1.5, label="min_p=1.5 must raise ValueError")
    return cases + _min_p_real_cases()


# ------------------------------------------------------------------------------------------
# exercise 5
def _temperature_cases() -> list[Case]:
    temps = [0, 1e-3, 0.7, 1, 3.0, 0.0]

    def make(g, i):
        kind, dtype = _kind_dtype(i)
        if kind == "extreme":
            kind = "huge"  # +-3e38 / T overflows to inf for T < 1: not a meaningful input
        x = _rand_logits(g, _shape(g), dtype, kind)
        T = temps[i % len(temps)]
        # float64 in, float64 accuracy out: logits / T rounded once (a division done in float32 and
        # cast back is 1e-7 off: bug zoo `apply_temperature__float32_division`)
        tol = {torch.float16: 1e-3, torch.bfloat16: 8e-3, torch.float64: 1e-12}.get(dtype, 1e-6)
        return Case((x, T), label=_label(x, kind, f"T={T}"), compare=filtered(rtol=tol))

    cases = _random_cases(109, 24, make)
    # the text: at T = 0 only the largest logit keeps its value; a near-tie is not a tie (a
    # tolerance of 1e-4 kept both: bug zoo `apply_temperature__t0_keeps_near_ties`)
    cases.append(
        Case(
            (torch.tensor([1.0, 0.99995, 0.5]), 0),
            label="T=0 on [1, 0.99995, 0.5]: one token kept",
            compare=filtered(),
        )
    )
    # the text: any T > 0 divides, however small (a cut-off such as T < 1e-4 taken as greedy is
    # wrong: bug zoo `apply_temperature__small_t_greedy`)
    small = torch.tensor([[2.5, -1.25, 7.0, -math.inf, 0.3], [-4.0, 0.75, 0.75, 1.5, -0.125]])
    for T in (1e-5, 1e-6):
        cases.append(
            Case((small, T), label=f"float32 [2, 5], T={T:g}: logits / T (finite, up to 7e6)")
        )
    cases.append(
        Case(
            (small[1].double(), 1e-6),
            label="float64 [5], T=1e-06: logits / T",
            compare=filtered(rtol=1e-12),
        )
    )
    cases += raises_case("ValueError", torch.zeros(3), -0.5, label="T=-0.5 must raise ValueError")
    return cases + _temperature_real_cases()


def _penalty_cases() -> list[Case]:
    def make(g, i):
        kind, dtype = _kind_dtype(i)
        if kind == "extreme":
            kind = "neg_inf"
        shape = _shape(g, 30)
        x = _rand_logits(g, shape, dtype, kind)
        L = int(torch.randint(0, 12, (), generator=g))
        ids = torch.randint(0, shape[-1], shape[:-1] + (L,), generator=g)
        pen = [1.3, 2.0, 0.8, 1.0, 1.05][i % 5]
        tol = {torch.float16: 1e-3, torch.bfloat16: 8e-3}.get(dtype, 1e-6)
        return Case(
            (x, ids, pen),
            label=_label(x, kind, f"{L} previous ids per row, penalty {pen}"),
            compare=filtered(rtol=tol),
        )

    return _random_cases(110, 20, make) + _penalty_real_cases()


def _settings(g: torch.Generator, shape: tuple[int, ...], i: int) -> dict:
    """Random pipeline settings; some neutral, some extreme."""
    s: dict = {}
    s["temperature"] = [1.0, 0.7, 0.0, 1.5, 0.3][i % 5]
    if i % 2 == 0:
        s["top_k"] = int(torch.randint(1, shape[-1] + 2, (), generator=g))
    if i % 3 != 2:
        s["top_p"] = round(float(torch.rand((), generator=g)) * 0.9 + 0.05, 3)
    if i % 4 == 1:
        s["min_p"] = round(float(torch.rand((), generator=g)) * 0.3, 3)
    if i % 3 == 0:
        s["repetition_penalty"] = 1.3
        s["previous_ids"] = torch.randint(0, shape[-1], shape[:-1] + (5,), generator=g)
    return s


def _pipeline_margin_ok(x: torch.Tensor, s: dict) -> bool:
    """Reject settings whose top-p / min-p decisions are within MARGIN of a threshold (exact
    arithmetic)."""
    z = x.double()
    if s.get("previous_ids") is not None:
        z = z.clone().reshape(-1, z.shape[-1])
        ids = s["previous_ids"].reshape(z.shape[0], -1)
        for r in range(z.shape[0]):
            u = torch.unique(ids[r])
            z[r, u] = torch.where(
                z[r, u] > 0, z[r, u] / s["repetition_penalty"], z[r, u] * s["repetition_penalty"]
            )
    T = s.get("temperature", 1.0)
    if T == 0:
        return True
    z = z / T
    if "top_k" in s and s["top_k"] < z.shape[-1]:
        kth = torch.topk(z, s["top_k"], dim=-1).values[..., -1:]
        z = z.masked_fill(z < kth, -math.inf)
    if "top_p" in s:
        if _top_p_margin(z, s["top_p"]) < MARGIN:
            return False
    if "min_p" in s:
        probs = _probs64(z)
        ratio = probs / probs.amax(dim=-1, keepdim=True)
        # ratio is relative, so truncation by top-p does not move min-p's decisions
        if float((ratio - s["min_p"]).abs().min()) < MARGIN:
            return False
    return True


def _pipeline_cases() -> list[Case]:
    def make(g, i):
        kind, dtype = _kind_dtype(i)
        if kind == "extreme":
            kind = "peaked"
        shape = _shape(g, 32)
        x = _rand_logits(g, shape, dtype, kind)
        s = _settings(g, shape, i)
        if not _pipeline_margin_ok(x, s):
            return None
        tol = {torch.float16: 1e-3, torch.bfloat16: 8e-3}.get(dtype, 1e-6)
        desc = ", ".join(
            f"{k}={v}" if k != "previous_ids" else "per-row history" for k, v in s.items()
        )
        return Case((x,), s, label=_label(x, kind, desc), compare=filtered(rtol=tol))

    cases = _random_cases(111, 30, make)
    # Order matters: top-k=2 renormalises [.4, .3] to [.57, .43], so top-p=0.55 then keeps 1 (top-p
    # first: 2).
    rows = torch.stack([log_probs([0.4, 0.3, 0.2, 0.1]), log_probs([0.1, 0.2, 0.4, 0.3])])
    cases.append(
        Case(
            (rows,),
            {"top_k": 2, "top_p": 0.55},
            label="top-k=2 then top-p=0.55 on [.4, .3, .2, .1] (two orders)",
            compare=filtered(rtol=1e-6),
        )
    )
    # Temperature before top-k: in half precision, dividing by T can round two neighbouring logits
    # to one value, and top-k keeps ties, so top-k=1 then keeps two; top-k first would keep one (bug
    # zoo: `process_logits__top_k_before_temperature`). Both pairs sit
    # well inside one rounding cell after the division (>= 1e-4 from its edges), so any once-rounded
    # division (x / T, x * (1 / T) in float32) gives the same tie.
    for dtype, a, b in [
        (torch.bfloat16, 1.9921875, 1.984375),
        (torch.float16, 2 - 2**-10, 2 - 2**-9),
    ]:
        x = torch.tensor([[a, b, 0.5, -1.0], [-1.0, 0.5, b, a]], dtype=dtype)
        tol = {torch.float16: 1e-3, torch.bfloat16: 8e-3}[dtype]
        cases.append(
            Case(
                (x,),
                {"temperature": 1.9, "top_k": 1},
                label=f"{str(dtype).removeprefix('torch.')} neighbours {a} and {b}, T=1.9 then "
                "top-k=1 (the division ties them: both kept)",
                compare=filtered(rtol=tol),
            )
        )
    return cases


def _sample_next_cases() -> list[Case]:
    g = _g(112)
    cases = []
    n = 3000
    for i in range(8):
        V = [6, 12, 40, 8, 20, 5, 30, 10][i]
        kind = ["normal", "ties", "neg_inf", "peaked", "normal", "ties", "huge", "normal"][i]
        row = _rand_logits(g, (V,), torch.float32, kind)
        s = _settings(g, (1, V), i)
        if s.get("previous_ids") is not None:
            s["previous_ids"] = s["previous_ids"].expand(n, -1).clone()
        while not _pipeline_margin_ok(
            row[None], {k: (v[:1] if k == "previous_ids" else v) for k, v in s.items()}
        ):
            s["top_p"] = round(float(torch.rand((), generator=g)) * 0.9 + 0.05, 3)
        x = row.expand(n, V).clone()
        desc = ", ".join(
            f"{k}={v}" if k != "previous_ids" else "penalised history" for k, v in s.items()
        )
        cases.append(
            Case((x, Generator(400 + i)), s, label=f"{kind} [{n}, {V}] identical rows, {desc}")
        )
    # Temperature 0 with tied maxima: greedy means the lowest tied id, not a draw among the tied
    # ones.
    tied = torch.tensor([0.5, 2.0, -1.0, 2.0, 2.0, 1.0])
    cases.append(
        Case(
            (tied.expand(n, 6).clone(), Generator(410)),
            {"temperature": 0, "top_p": 0.9},
            label="temperature 0 with three tied maxima: always the lowest tied id",
            no_draw=True,
        )
    )
    # Temperature 0 after the repetition penalty: 2 / 1.3 < 1.9, so the penalised argmax is id 1,
    # not id 0 (a blind class's sample_next went straight to greedy at T = 0 and skipped the
    # penalty)
    cases.append(
        Case(
            (torch.tensor([2.0, 1.9, 0.0]).expand(n, 3).clone(), Generator(412)),
            {
                "temperature": 0,
                "repetition_penalty": 1.3,
                "previous_ids": torch.zeros(n, 1, dtype=torch.long),
            },
            label="temperature 0 after a repetition penalty: the penalised argmax",
            no_draw=True,
        )
    )
    # Temperature before top-p: at T = 0.5 top-p = 0.8 keeps 2 tokens; at T = 1 it would keep 3.
    sharp = log_probs([0.5, 0.25, 0.125, 0.125])
    cases.append(
        Case(
            (sharp.expand(n, 4).clone(), Generator(411)),
            {"temperature": 0.5, "top_p": 0.8},
            label="T=0.5 then top-p=0.8 on [1/2, 1/4, 1/8, 1/8]",
        )
    )
    # A 3-D batch of identical rows (one stored distribution per case: see the module docstring).
    row = _rand_logits(g, (16,), torch.float32, "normal")
    cases.append(
        Case(
            (row.expand(50, 40, 16).clone(), Generator(420)),
            {"top_k": 5, "temperature": 0.8},
            label="3-D batch [50, 40, 16] of identical rows, top_k=5, temperature=0.8",
        )
    )
    cases += _sample_next_real_cases()
    ff = FALSE_FAIL / (len(cases) + 1)
    # keeps each case's no_draw
    return [replace(c, compare=sampler_fit(ff, pool_ties=True)) for c in cases] + [
        _sample_next_leak_case(ff)
    ]


# ------------------------------------------------------------------------------------------
# exercise 6
def _token_lists(g: torch.Generator, n_seq: int, max_len: int, vocab: int) -> list[list[int]]:
    out = []
    for _ in range(n_seq):
        L = int(torch.randint(0, max_len + 1, (), generator=g))
        seq = torch.randint(0, vocab, (L,), generator=g).tolist()
        if L > 6 and torch.rand((), generator=g) < 0.5:  # plant a repeated block
            b = int(torch.randint(1, 4, (), generator=g))
            seq = seq + seq[-b:] * 3
        out.append(seq)
    return out


def _distinct_cases() -> list[Case]:
    g = _g(113)
    cases = []
    for i in range(12):
        seqs = _token_lists(g, int(torch.randint(1, 6, (), generator=g)), 30, [3, 10, 50][i % 3])
        n = 1 + i % 4
        cases.append(
            Case(
                (seqs, n),
                label=f"{len(seqs)} sequences, vocab {[3, 10, 50][i % 3]}, n={n}",
                compare=number_close(),
            )
        )
    cases.append(Case(([], 1), label="no sequences at all", compare=number_close()))
    # the text: an n-gram is a tuple of ids, not its digits glued ((1, 23) and (12, 3) are
    # different; bug zoo: `distinct_n__glued_digit_keys`)
    cases.append(
        Case(([[1, 23, 4], [12, 3, 4]], 2), label="multi-digit ids, n=2", compare=number_close())
    )
    cases.append(Case(([[], [1]], 2), label="only empty/short sequences", compare=number_close()))
    return cases


def _loop_cases() -> list[Case]:
    g = _g(114)
    cases = []
    for i in range(24):
        L = int(torch.randint(0, 40, (), generator=g))
        seq = torch.randint(0, [2, 5, 20][i % 3], (L,), generator=g).tolist()
        s = int(torch.randint(1, 21, (), generator=g))
        reps = int(torch.randint(1, 5, (), generator=g))
        if i % 2 == 0:
            block = torch.randint(0, 20, (s,), generator=g).tolist()
            seq = seq + block * reps
        kw = {}
        if i % 5 == 1:
            kw["max_period"] = int(torch.randint(1, 10, (), generator=g))
        if i % 7 == 2:
            kw["min_repeats"] = int(torch.randint(2, 5, (), generator=g))
        cases.append(
            Case((seq,), kw, label=f"length {len(seq)}" + (f" {kw}" if kw else ""), compare=boolean)
        )
    # the text: blocks of ids, not of digits ([1, 11] [11, 1] [1, 11] glued read '111111111'; bug
    # zoo: `ends_in_loop__glued_digit_string`)
    cases.append(
        Case(
            ([1, 11, 11, 1, 1, 11],),
            {"max_period": 2, "min_repeats": 3},
            label="multi-digit ids",
            compare=boolean,
        )
    )
    # a loop whose period is exactly max_period
    for s in (20, 7):
        block = torch.randint(0, 50, (s,), generator=g).tolist()
        kw = {} if s == 20 else {"max_period": 7}
        cases.append(
            Case(([1, 2] + block * 3,), kw, label=f"period {s} = max_period", compare=boolean)
        )
    return cases


# Cases that make each setting's default and each promised error matter (machine-made mutants that
# changed a default value or dropped a `raise` survived without them).
def _penalty_extra() -> list[Case]:
    x = torch.tensor([[2.0, -1.0, 0.5, 3.0]])
    return (
        raises_case("ValueError", x, [0], 0.0, label="penalty 0 must raise ValueError")
        + raises_case("ValueError", x, [0], -1.5, label="penalty -1.5 must raise ValueError")
        + [Case((x, [], 1.5), label="an empty history: nothing is penalised")]
    )


def _loop_defaults() -> list[Case]:
    b20, b21 = list(range(100, 120)), list(range(200, 221))
    return [
        Case(
            ([1] + b20 * 3,),
            label="period 20 x 3 with the default max_period=20, min_repeats=3",
            compare=boolean,
        ),
        Case(
            ([1] + b21 * 3,),
            label="period 21 x 3: longer than the default max_period=20",
            compare=boolean,
        ),
        Case(
            ([1] + b20 * 2,),
            label="period 20 x 2: fewer than the default min_repeats=3",
            compare=boolean,
        ),
        # one token is a block of length 1 repeated once (an early `len(ids) < 2` exit said no: bug
        # zoo `ends_in_loop__one_token_list_false`)
        Case(
            ([7],),
            {"min_repeats": 1},
            label="[7], min_repeats=1: one block of one token",
            compare=boolean,
        ),
        Case(
            ([],), {"min_repeats": 1}, label="[], min_repeats=1: no block at all", compare=boolean
        ),
        Case(([7],), {"min_repeats": 2}, label="[7], min_repeats=2: too short", compare=boolean),
    ]


def _min_p_errors() -> list[Case]:
    x = torch.tensor([[2.0, 1.0, 0.0, -1.0]])
    return (
        raises_case("ValueError", x, -0.1, label="min_p=-0.1 must raise ValueError")
        + raises_case(
            "ValueError",
            x,
            0.1,
            min_tokens_to_keep=0,
            label="min_tokens_to_keep=0 must raise ValueError",
        )
        + raises_case(
            "ValueError",
            x,
            0.1,
            min_tokens_to_keep=1.5,
            label="min_tokens_to_keep=1.5 must raise ValueError",
        )
    )


def _pipeline_defaults() -> list[Case]:
    x = torch.randn(2, 12, generator=_g(77)) * 2
    return (
        [
            Case(
                (x,),
                {},
                label="no settings: every step at its neutral default",
                compare=filtered(rtol=1e-6),
            ),
            Case(
                (x,),
                {"top_k": 5},
                label="top_k=5 only (temperature left at its default 1)",
                compare=filtered(rtol=1e-6),
            ),
            Case((x,), {"top_p": 0.8}, label="top_p=0.8 only", compare=filtered(rtol=1e-6)),
            Case(
                (x,),
                {"previous_ids": [[0, 3], [5, 5]]},
                label="previous_ids given, repetition_penalty left at its default 1 (no penalty)",
                compare=filtered(rtol=1e-6),
            ),
        ]
        + raises_case(
            "ValueError",
            x,
            top_k=0,
            label="top_k=0 is a setting (not None): top-k runs and rejects it",
        )
        + [
            Case(
                (x,),
                {"repetition_penalty": 1.3},
                label="a penalty but no previous_ids: the penalty step is skipped",
                compare=filtered(rtol=1e-6),
            ),
            Case(
                (x,),
                {"top_p": 1.5},
                label="top_p=1.5: top-p runs only when top_p < 1 (the table), so nothing is cut",
                compare=filtered(rtol=1e-6),
            ),
            # the text: top-p runs when top_p < 1, so top_p=0 keeps min_tokens_to_keep=1 token per
            # row (a test `0 < top_p < 1` skipped it: bug zoo `process_logits__top_p_zero_skipped`).
            # x's rows have distinct maxima.
            Case(
                (x,),
                {"top_p": 0.0},
                label="top_p=0: top-p runs (0 < 1) and keeps one token per row",
                compare=filtered(rtol=1e-6),
            ),
            Case(
                (x,),
                {"temperature": 0.7, "top_p": 0},
                label="temperature=0.7 and top_p=0: one token per row",
                compare=filtered(rtol=1e-6),
            ),
        ]
    )


# Generated cases (autograde.generated): {check: (a name in autograde.strategies.STRATEGIES, how
# many)}, drawn at release.
GENERATED = {
    "greedy_hidden": ("greedy_call", 24),
    "top_k_filter_hidden": ("top_k_call", 24),
    "apply_temperature_hidden": ("apply_temperature_call", 24),
    "penalize_repeats_hidden": ("penalize_repeats_call", 24),
    "distinct_n_hidden": ("distinct_n_call", 24),
    "ends_in_loop_hidden": ("ends_in_loop_call", 24),
}


def _generated(check: str) -> list[Case]:
    from autograde import generated

    return generated.cases(ASSIGNMENT, check)


CHECKS = [
    Check(
        "greedy_hidden",
        "greedy",
        lambda: _greedy_cases() + _generated("greedy_hidden"),
        exact(),
        forbidden=GREEDY_FORBIDDEN,
        hint="more batch shapes and dtypes (fp16/bf16): one long id per row over the last dim, "
        "ties to the lowest id.",
    ),
    Check(
        "sample_hidden",
        "sample",
        _sample_cases,
        sampler_fit(FALSE_FAIL),
        contract=Contract(generator=True),
        forbidden=SAMPLE_FORBIDDEN,
        hint="one uniform per row from the generator, inverse CDF along the last dim; "
        "zero-probability tokens never drawn.",
    ),
    Check(
        "top_k_filter_hidden",
        "top_k_filter",
        lambda: _top_k_cases() + _generated("top_k_filter_hidden"),
        filtered(),
        hint="keep logits >= the k-th largest of each row (ties kept); k >= V keeps all; keep the "
        "dtype.",
    ),
    Check(
        "top_p_filter_hidden",
        "top_p_filter",
        _top_p_cases,
        filtered(top_p=True),
        hint="keep a token while the mass before it (sorted descending, probabilities in float32) "
        "is < p; map the mask back to vocabulary order; min_tokens_to_keep; p == 1 keeps all.",
    ),
    Check(
        "min_p_filter_hidden",
        "min_p_filter",
        lambda: _min_p_cases() + _min_p_errors(),
        filtered(),
        hint="keep probabilities >= min_p * (row max probability); compute in float32; keep the "
        "dtype.",
    ),
    Check(
        "apply_temperature_hidden",
        "apply_temperature",
        lambda: _temperature_cases() + _generated("apply_temperature_hidden"),
        filtered(rtol=1e-6),
        hint="logits / T; T == 0: row max(es) kept, others -inf; keep the dtype.",
    ),
    Check(
        "penalize_repeats_hidden",
        "penalize_repeats",
        lambda: (
            _penalty_cases()
            + _penalty_extra()
            + _generated("penalize_repeats_hidden")
            # "No Python loop over tokens", counted here too (white-box red team 25, E4)
            + _visible._penalty_cost_cases()
        ),
        filtered(rtol=1e-6),
        contract=Contract(
            meta=True,
            cost=(_visible.PEN_COST_SMALL, _visible.PEN_COST_LARGE, 2.0),
            cost_cap=((_visible.PEN_COST_CAP, _visible.PEN_COST_CAP_LINES),),
        ),
        hint="seen tokens (per row, once each): positive / penalty, else * penalty.",
    ),
    Check(
        "process_logits_hidden",
        "process_logits",
        lambda: _pipeline_cases() + _pipeline_defaults(),
        filtered(rtol=1e-6),
        hint="penalty -> temperature -> top-k -> top-p -> min-p, skipping neutral settings; never "
        "modify the input.",
    ),
    Check(
        "sample_next_hidden",
        "sample_next",
        _sample_next_cases,
        sampler_fit(FALSE_FAIL, pool_ties=True),
        reference="sample_next_row_probs",
        contract=Contract(generator=True),
        hint="temperature 0 is greedy on the processed logits (no random draw); otherwise sample "
        "the processed logits' probabilities with the caller's generator.",
    ),
    Check(
        "distinct_n_hidden",
        "distinct_n",
        lambda: (
            _distinct_cases()
            + raises_case("ValueError", [[1, 2, 3]], 0, label="n=0 must raise ValueError")
            + _generated("distinct_n_hidden")
        ),
        number_close(),
        contract=Contract(number=True),
        hint="n-grams per sequence, pooled: distinct / total; 0.0 when there are none.",
    ),
    Check(
        "ends_in_loop_hidden",
        "ends_in_loop",
        lambda: _loop_cases() + _loop_defaults() + _generated("ends_in_loop_hidden"),
        boolean,
        hint="the last s * min_repeats ids are min_repeats copies of one block, for some s <= "
        "max_period.",
    ),
]
# Visible checks in disguise: outside the kernel their points need these too
# (autograde/hidden/_twins.py). A sampler's stated distribution moves with the tokens, except at T =
# 0, where the text names the lowest tied id.
CHECKS += twins(
    _visible.CHECKS,
    {
        # the vocabulary grows too (copied columns: a lookup keyed on sorted values misses,
        # test_twins.py); not by copies where a threshold rule meets them: [0.5, 0.25, 0.25] with a
        # copy of each sums to p exactly, and rounding picks
        **{
            name: {"kind": "vocab", "extend": "copy"}
            for name in ("apply_temperature", "greedy", "top_k_filter", "penalize_repeats")
        },
        # threshold rules get columns of probability exactly 0 instead (a lookup of top-p and min-p
        # keyed on sorted rounded probabilities behind a rule wrong only at exact ties kept 19/40
        # against 14/40: test_twins.py). process_logits runs the student's own filters: a disguise
        # it did not need would charge a filter's slip to it again
        **{name: {"kind": "vocab", "extend": "zeros"} for name in ("top_p_filter", "min_p_filter")},
        "process_logits": {"kind": "vocab"},
        "sample": {"kind": "vocab", "move_expected": True},
        "sample_next": {
            "kind": "vocab",
            "move_expected": True,
            "skip": lambda c: c.kwargs.get("temperature", 1) == 0,
        },
        "distinct_n": {"kind": "ids"},
        "ends_in_loop": {"kind": "ids"},
    },
)
# the notebook's opening: Hugging Face's ready-made warpers are not fine, in any exercise
for _c in CHECKS:
    object.__setattr__(_c, "forbidden", tuple(_c.forbidden) + HF_FORBIDDEN)
