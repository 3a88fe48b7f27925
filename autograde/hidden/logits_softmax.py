"""Hidden checks for notebook 02 (logits → probabilities): more and harder cases than the visible
ones.

Expected values are the reference solutions' outputs (solutions/02_logits_softmax), stored by
`python -m autograde release` in autograde/references/02_logits_softmax.json. Tolerances:
- float32 answers: rtol 1e-5, atol 1e-6 (log-softmax: atol 1e-5, its values reach -1e4); float64
answers:
  rtol 1e-10, atol 1e-12, so a float64 input must really be computed in float64;
- sentence log-probabilities under the real model: 2e-3 nats absolute. Correct variants measured on
such
  texts (float64 vs float32 log-softmax, log(softmax), KV-cached token-by-token scoring) differ from
  the reference by at most 1.5e-4 nats; the smallest bug (off-by-one position) moves the sum by tens
  of nats. Perplexity: rtol 1e-3 (>= exp(2e-3 / n) - 1 for n >= 2 scored tokens).
"""

from __future__ import annotations

import math

import torch

from autograde.hidden._twins import twins
from course_lib.checks import logits_softmax as _visible
from course_lib.checks import toy_inputs  # noqa: F401 - registers the model on a second device
from course_lib.checks.engine import Case, Check, Contract, Resource, allclose

# Importing the visible module registers the resources (real model, toy models) and gives its
# comparators.
from course_lib.checks.logits_softmax import (
    LOGPROB_ATOL,
    PPL_RTOL,
    SOFTMAX_FORBIDDEN,
    entropy_close,
    logprob_close,
    probs_close,
    raises_case,
    temperature_close,
)

ASSIGNMENT = "02_logits_softmax"


def _g(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _randn(*shape: int, seed: int, scale: float = 1.0, dtype=torch.float32) -> torch.Tensor:
    return torch.randn(*shape, generator=_g(seed), dtype=dtype) * scale


def _with_neg_inf(x: torch.Tensor, seed: int, frac: float = 0.3) -> torch.Tensor:
    """Mask a random `frac` of the entries to -inf, keeping at least one finite entry per row."""
    mask = torch.rand(x.shape, generator=_g(seed)) < frac
    mask[..., 0] = False
    return x.masked_fill(mask, -math.inf)


def _logit_cases(seed: int) -> list[Case]:
    """Inputs shared by softmax and log_softmax (expected values come from each one's reference)."""
    return [
        Case(
            (_randn(3, 7, seed=seed, scale=50, dtype=torch.float64),),
            label="float64 [3, 7], logits ~ N(0, 50^2)",
        ),
        Case(
            (_randn(2, 3, 11, seed=seed + 1, scale=1000),),
            label="float32 [2, 3, 11], logits ~ N(0, 1000^2)",
        ),
        Case(
            (
                _randn(5, 5, seed=seed + 2, scale=3)
                + torch.tensor([0.0, 100, 500, 1000, -1000])[:, None],
            ),
            label="square [5, 5], each row shifted by a different offset (0 ... 1000)",
        ),
        Case(
            (torch.tensor([[0.0, -math.inf, 5.0, -math.inf], [-math.inf, -math.inf, 1.0, 1.0]]),),
            label="rows with several -inf entries",
        ),
        Case(
            (_with_neg_inf(_randn(4, 9, seed=seed + 3, scale=10), seed + 4),),
            label="random [4, 9] with -inf masks",
        ),
        Case((_randn(1, 1024, seed=seed + 5, scale=5),), label="one long row of 1024 logits"),
        Case((torch.tensor([[42.0]]),), label="a single logit [[42.]]"),
        Case((torch.tensor([1e4, -1e4, 0.0]),), label="[1e4, -1e4, 0] (float32)"),
        Case(
            (torch.tensor([0.0, -800.0, -1e300], dtype=torch.float64),),
            label="float64 [0, -800, -1e300]",
        ),
        Case(
            (_randn(2, 2, 2, 3, seed=seed + 6, scale=2, dtype=torch.float64),),
            label="float64 4-D [2, 2, 2, 3]",
        ),
    ]


def _temperature_cases() -> list[Case]:
    ties = torch.tensor(
        [
            [1.0, 1, 1, 1, 1],
            [2, 7, 7, -math.inf, 7],
            [-math.inf, 0, -math.inf, -math.inf, -math.inf],
        ]
    )
    x = _randn(3, 6, seed=20, scale=3)
    cases = [
        Case((x, 0.7), label="float32 [3, 6] at T=0.7"),
        Case(
            (_randn(2, 3, 5, seed=21, scale=2, dtype=torch.float64), 1.5),
            label="float64 [2, 3, 5] at T=1.5",
        ),
        Case((ties, 0), label="T=0 with ties (all equal, three-way, -inf elsewhere)"),
        Case((ties.double(), 0.0), label="T=0 with ties, float64"),
        Case((_randn(2, 3, 4, seed=22), 0), label="T=0 on a [2, 3, 4] batch"),
        # T = 0 taken as a tiny temperature passes on random logits; one float32 step apart it is
        # not one-hot
        Case(
            (torch.tensor([[1.0, 0.99999988, 0.0], [-3.0, 2.0, 2.0 - 2.4e-7]]), 0),
            label="T=0 on near-ties one float32 step apart: exactly one-hot",
        ),
        # T = 0 faked as T = 1e-10 (a blind class): float64 logits 1e-12 apart, and float32 logits
        # near the top
        Case(
            (torch.tensor([1.0, 1.0 + 1e-12], dtype=torch.float64), 0),
            label="T=0, float64 logits 1e-12 apart",
        ),
        Case(
            (torch.tensor([3e38, 1e38, 0.0]), 0),
            label="T=0 on float32 logits near the largest float",
        ),
        Case((_randn(4, 8, seed=23, scale=10), 1e-6), label="tiny T=1e-6"),
        Case(
            (torch.tensor([0.0, 1e-6, -1e-6]), 1e-6),
            label="tiny T=1e-6 on logits 1e-6 apart: not greedy",
        ),
        Case(
            (torch.tensor([[0.5, 0.5 + 3e-5], [2.0, 2.0]], dtype=torch.float64), 1e-5),
            label="T=1e-5, float64",
        ),
        Case(
            (torch.tensor([10.0, 9.99, 0.0]), 1e-3),
            label="T=1e-3 on [10, 9.99, 0]: logits / T up to 1e4",
        ),
        Case((_randn(2, 5, seed=24, scale=4), 1e4), label="huge T=1e4"),
        Case((_with_neg_inf(_randn(3, 7, seed=25, scale=3), 26), 3.0), label="-inf entries at T=3"),
        Case((_with_neg_inf(_randn(3, 7, seed=27, scale=3), 28), 0), label="-inf entries at T=0"),
        Case((x, 1), label="T given as the int 1"),
        Case((_randn(1, 1024, seed=29, scale=5), 0.25), label="a row of 1024 logits at T=0.25"),
    ]
    cases += raises_case("ValueError", x, -0.5, label="T=-0.5 must raise ValueError")
    cases += raises_case("ValueError", x, -1e-9, label="T=-1e-9 must raise ValueError")
    return cases


def _entropy_cases() -> list[Case]:
    p = torch.softmax(_randn(4, 10, seed=30, scale=2), dim=-1)
    p64 = torch.softmax(_randn(2, 3, 7, seed=31, scale=3, dtype=torch.float64), dim=-1)
    # exact zeros
    zeros = torch.softmax(_with_neg_inf(_randn(3, 6, seed=32, scale=2), 33, frac=0.5), dim=-1)
    vocab = torch.softmax(_randn(49152, seed=34, scale=4), dim=-1)
    return [
        Case((p,), label="float32 [4, 10]"),
        Case((p64,), label="float64 [2, 3, 7]"),
        Case((zeros,), label="[3, 6] with exact zeros"),
        Case(
            (torch.tensor([1 - 1e-7, 1e-7], dtype=torch.float64),),
            label="float64 near-one-hot [1 - 1e-7, 1e-7]",
        ),
        Case((torch.eye(5),), label="a batch of one-hot rows (identity [5, 5])"),
        Case((vocab,), label="a distribution over 49152 tokens"),
        Case((torch.tensor([1e-45, 1 - 1e-7, 1e-7]),), label="a denormal probability 1e-45"),
    ]


_TEXTS = [
    "Once upon a time, there was a little robot who loved to paint.",
    "def add(a, b):\n    return a + b",
    "Water boils at 100 degrees Celsius at sea level.",
]


_SPACED = " The cat sat on the mat.\n"


def _logprob_cases() -> list[Case]:
    model, tok = Resource("smollm2_fp32"), Resource("smollm2_tokenizer")
    cases = [Case((model, tok, t), label=f"SmolLM2, {t!r}") for t in _TEXTS]
    cases += [
        Case(
            (Resource("nb02_next_id_lm"), Resource("nb02_id_tokenizer"), "2 3"),
            label="next-id toy model, shortest scorable text '2 3'",
        )
    ]
    # the text: "run the model under torch.no_grad()" (same numbers either way: a toy model that
    # refuses autograd)
    cases += [
        Case(
            (Resource("nb02_next_id_lm_nograd"), Resource("nb02_id_tokenizer"), "2 3 4 0"),
            label="next-id toy model that refuses to run with autograd on, '2 3 4 0'",
        )
    ]
    # the text: use your log_softmax (a blind class took log(softmax): -inf where the probability
    # underflows)
    cases += [
        Case(
            (Resource("nb02_improbable_lm"), Resource("nb02_id_tokenizer"), "2 3 7"),
            label="toy model: token 7 after 3 is e^-200 times less likely than its rival",
        )
    ]
    # the text: fewer than 2 *tokens* (a blind class counted words): one word, two tokens
    cases += [Case((model, tok, "Hello!"), label="SmolLM2, 'Hello!': one word, two tokens")]
    # every text above is under 17 tokens, so scoring only the first 16 passed (bug zoo:
    # `sequence_logprob__first_16_tokens_only`); long texts do not
    cases += [Case((model, tok, _IMPROBABLE), label="SmolLM2, 141 tokens of nonsense")]
    # the text: "nothing added" (nor removed): a leading space and a trailing newline are tokens of
    # their own (bug zoo: `sequence_logprob__strips_text`)
    cases += [
        Case(
            (model, tok, _SPACED),
            label=f"SmolLM2, {_SPACED!r}: a leading space and a trailing newline",
        )
    ]
    cases += [
        Case(
            (
                Resource("nb02_next_id_lm"),
                Resource("nb02_id_tokenizer"),
                " ".join(str(i % 8) for i in range(2, 47)),
            ),
            label="next-id toy model, 45 tokens '2 3 ... 6'",
        )
    ]
    # the text: "on the model's device" (ids built on the CPU fail only beside a GPU:
    # sequence_logprob__ids_on_cpu)
    cases += [
        Case(
            (Resource("nb02_next_id_lm_second_device"), Resource("nb02_id_tokenizer"), "5 6 7 2"),
            label="next-id toy model whose weights are on another device than the CPU, '5 6 7 2'",
        )
    ]
    cases += raises_case("ValueError", model, tok, "", label="empty text: must raise ValueError")
    return cases


# 141 tokens of nonsense: log-probability -828 in total, below -709.8, where exp(-sum) overflows a
# float64; the text's exp(-mean) is 371 (a blind class's exp(-sum) ** (1 / (n - 1)) raised
# OverflowError only here)
_IMPROBABLE = (
    "Colourless turbines negotiate with purple yesterday; seventeen lighthouses hum algebra while "
    "the "
    "marmalade parliament votes to abolish Thursdays. Meanwhile, a cautious violin borrows eleven "
    "umbrellas "
    "from the moon, and every spreadsheet in Lisbon quietly learns to whistle in hexadecimal. "
    "Granite "
    "pancakes apologise to the barometer; a committee of sleepy glaciers drafts sonnets about "
    "plumbing, "
    "and the octopus notary stamps each cloud twice before lunch. Nobody in Reykjavik remembers "
    "why the "
    "teaspoons unionised. Forty velvet tractors audit the rainbow for rounding errors, whereupon "
    "a bashful "
    "volcano knits spreadsheets for the penguins of Ulaanbaatar and sells its echoes to a bakery."
)


def _perplexity_cases() -> list[Case]:
    model, tok = Resource("smollm2_fp32"), Resource("smollm2_tokenizer")
    return (
        [Case((model, tok, t), label=f"SmolLM2, {t!r}") for t in _TEXTS]
        + [
            Case(
                (model, tok, _IMPROBABLE),
                label="SmolLM2, 141 tokens of nonsense (log-prob -828 in all)",
            )
        ]
        + [
            Case(
                (Resource("nb02_next_id_lm"), Resource("nb02_id_tokenizer"), "6 7 0 3"),
                label="next-id toy model, '6 7 0 3'",
            )
        ]
        + [
            Case(
                (model, tok, _SPACED),
                label=f"SmolLM2, {_SPACED!r}: a leading space and a trailing newline",
            )
        ]
    )


# Generated cases (autograde.generated): {check: (a name in autograde.strategies.STRATEGIES, how
# many)}, drawn at release.
GENERATED = {
    "softmax_hidden": ("softmax_call", 24),
    "log_softmax_hidden": ("softmax_call", 24),
    "probs_at_temperature_hidden": ("temperature_call", 24),
    "entropy_hidden": ("entropy_call", 24),
}


def _generated(check: str) -> list[Case]:
    from autograde import generated

    return generated.cases(ASSIGNMENT, check)


CHECKS = [
    Check(
        "softmax_hidden",
        "softmax",
        lambda: _logit_cases(10) + _generated("softmax_hidden"),
        probs_close(),
        forbidden=SOFTMAX_FORBIDDEN,
        hint="float64, [B, T, V] shapes, rows of very different scales, -inf entries: does each "
        "row get its own shift, is the dtype kept, does -inf give exactly 0?",
    ),
    Check(
        "log_softmax_hidden",
        "log_softmax",
        lambda: _logit_cases(10) + _generated("log_softmax_hidden"),
        probs_close(rtol32=1e-5, atol32=1e-5, log=True),
        forbidden=SOFTMAX_FORBIDDEN,
        hint="extreme gaps and -inf entries: never log() a probability, keep the input's dtype, "
        "and check that a -inf logit gives -inf, not NaN.",
    ),
    Check(
        "probs_at_temperature_hidden",
        "probs_at_temperature",
        lambda: _temperature_cases() + _generated("probs_at_temperature_hidden"),
        temperature_close(),
        hint="T=0: one-hot of the max in probability space, ties split evenly; T<0: ValueError; "
        "tiny T must not overflow.",
    ),
    Check(
        "entropy_hidden",
        "entropy",
        lambda: _entropy_cases() + _generated("entropy_hidden"),
        entropy_close(),
        hint="nats (natural log), 0 * log 0 = 0, along the last dim, keep the dtype.",
    ),
    Check(
        "sequence_logprob_hidden",
        "sequence_logprob",
        _logprob_cases,
        logprob_close(LOGPROB_ATOL),
        contract=Contract(number=True),
        hint="score tokens 2..n with the logits of the previous position; fewer than 2 tokens: "
        "ValueError.",
    ),
    Check(
        "perplexity_hidden",
        "perplexity",
        _perplexity_cases,
        allclose(rtol=PPL_RTOL, atol=0),
        contract=Contract(number=True),
        hint="exp(-mean log-prob) over the n - 1 scored tokens.",
    ),
]

# Visible checks in disguise: outside the kernel their points need these too
# (autograde/hidden/_twins.py). The vocabulary also grows (copied logit columns; for entropy, halved
# probability columns), so a lookup keyed on each row's sorted values misses (such a lookup kept
# 7/26 with the naive formulas behind it: test_twins.py).
CHECKS += twins(
    _visible.CHECKS,
    {
        **{
            name: {"kind": "vocab", "extend": "copy"}
            for name in ("softmax", "log_softmax", "probs_at_temperature")
        },
        "entropy": {"kind": "vocab", "extend": "split"},
    },
)
