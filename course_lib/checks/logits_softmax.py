"""Visible checks for notebook 02 (logits → probabilities): softmax, log-softmax, temperature,
entropy, sentence log-probability and perplexity.

Every expected value here is an independent truth, never the reference solution's output:
- exact maths written as closed forms (``1 / (1 + e^-1)`` for logits ``[1000, 999]``, ``log 4`` for
a uniform
  4-way distribution, ``-(n-1) log V`` for a uniform model);
- the notes' published temperature table for logits ``[2.0, 1.0, 0.5, 0.1]`` (3 decimals);
- a second implementation: ``torch.softmax`` / ``torch.log_softmax`` / ``torch.distributions`` in
float64,
  and, for the real model, Hugging Face transformers' loss on the same GGUF weights (numbers below);
- tiny bigram "toy" language models whose log-probabilities are known in closed form.

The engine calls the student's function on deep copies and reports any input it modified in place.
"""

from __future__ import annotations

import functools
import math

import torch

from course_lib.checks.engine import (
    Case,
    Check,
    Contract,
    Resource,
    allclose,
    raises_case,
    register_resource,
)
from course_lib.checks.toy_models import RefusingTableLM, no_grad_refusal

ASSIGNMENT = "02_logits_softmax"


# ------------------------------------------------------------------------------------ shared
# resources Toy models: bigram LMs (the logits at position t depend only on the token at t), so
# every log-probability is a closed form. Toy "text" is space-separated token ids: "0 1 2" -> [0, 1,
# 2].
TOY_V = 8
# Next-id model: after token i the logit of token (i + 1) % V is log 21, all others 0, so
# p(next = i + 1) = 21 / (21 + 7) = 3/4 and every other token has 1/28.
TOY_LOGIT = math.log(21.0)
P_HIT, P_MISS = 0.75, 1.0 / 28.0
# 40 ids counting up mod 8, then one that breaks the count: a score of every token, not of the first
# few
LONG_TOY = " ".join(str(i % 8) for i in range(39)) + " " + str((38 + 4) % 8)


class ToyTokenizer:
    """`encode("3 1 4") == [3, 1, 4]`; accepts tiktoken's keyword arguments and ignores them."""

    def encode(self, text: str, **kwargs) -> list[int]:
        return [int(w) for w in text.split()]

    def decode(self, ids) -> str:
        return " ".join(str(int(i)) for i in ids)


class BigramLM(torch.nn.Module):
    """`model(idx)[b, t] = table[idx[b, t]]`: ids (B, T) -> float32 logits (B, T, V), like
    course_lib's model."""

    def __init__(self, table: torch.Tensor):
        super().__init__()
        self.table = torch.nn.Parameter(table.float(), requires_grad=False)  # (V, V)

    def forward(self, idx: torch.Tensor, **kwargs) -> torch.Tensor:
        return self.table[idx]  # (B, T, V)


def uniform_lm() -> BigramLM:
    """Every next token equally likely: log p = -log V for every scored token, perplexity exactly
    V."""
    return BigramLM(torch.zeros(TOY_V, TOY_V))


def next_id_lm() -> BigramLM:
    """After token i, token (i + 1) % V has probability 3/4 and each other token 1/28."""
    table = torch.zeros(TOY_V, TOY_V)
    table[torch.arange(TOY_V), (torch.arange(TOY_V) + 1) % TOY_V] = TOY_LOGIT
    return BigramLM(table)


@functools.lru_cache(maxsize=1)
def _smollm2():
    from course_lib import load_model

    # float32 on purpose: the expected numbers below are float32 results (default_dtype may pick
    # bf16 on a GPU).
    return load_model(dtype=torch.float32, progress=False)


register_resource("smollm2_fp32", lambda: _smollm2()[0])
register_resource("smollm2_tokenizer", lambda: _smollm2()[1])
register_resource("nb02_uniform_lm", uniform_lm)
register_resource("nb02_next_id_lm", next_id_lm)
register_resource("nb02_id_tokenizer", ToyTokenizer)
register_resource(
    "nb02_next_id_lm_nograd", lambda: RefusingTableLM(next_id_lm().table.data, no_grad_refusal)
)


def _one_pass(min_len: int):
    """A refusal of a call on fewer than ``min_len`` ids: given a text of ``min_len + 1`` tokens,
    one pass over the whole text (or over all but its last token, whose logits score nothing) is all
    the model answers; a pass per prefix starts with a shorter one (the text: "the model runs
    once")."""

    def refuse(idx: torch.Tensor) -> str | None:
        if idx.shape[-1] < min_len:
            return (
                f"the model was called on {idx.shape[-1]} of the text's {min_len + 1} tokens: the "
                "text asks for one forward pass over the whole sequence, not one per prefix"
            )
        return None

    return refuse


ONE_PASS_TEXT = "0 1 2 3 4 6"  # 6 tokens: 1, 2, 3, 4 predicted (3/4 each), 6 missed (1/28)
register_resource(
    "nb02_next_id_lm_one_pass", lambda: RefusingTableLM(next_id_lm().table.data, _one_pass(5))
)


def improbable_lm() -> BigramLM:
    """After token i, token (i + 1) % V has logit 0 and every other token -200: p ~ e^-200, below
    float32's smallest number, so only a log-softmax scores it (-200), never log(softmax) (-inf)."""
    table = torch.full((TOY_V, TOY_V), -200.0)
    table[torch.arange(TOY_V), (torch.arange(TOY_V) + 1) % TOY_V] = 0.0
    return BigramLM(table)


register_resource("nb02_improbable_lm", improbable_lm)

# Hugging Face transformers 5.24 on the same GGUF file (SmolLM2-135M-Instruct.Q4_1, float32, CPU),
# with ids from course_lib's tokenizer: sum_logprob = -loss * (n - 1) and ppl = exp(loss) for
# `model(ids, labels=ids)`, which scores tokens 2..n exactly like our convention. course_lib's model
# agreed to <= 1.5e-4 nats (see docs/notebook02.md for the script).
HF_TRUTH = {
    "The capital of France is Paris.": (6, -15.404690, 13.032528),
    "The capital of France is Berlin.": (6, -22.080086, 39.646964),
}
# Largest legitimate difference measured between correct implementations on these texts (float32 vs
# float64 log-softmax, log(softmax) vs log-softmax, KV-cached token-by-token vs one pass): 1.5e-4
# nats. 2e-3 leaves >10x headroom; the smallest bug seen (scoring with the wrong position) moves the
# sum by >40.
LOGPROB_ATOL = 2e-3
SOFTMAX_FORBIDDEN = (
    "torch.softmax",
    "torch.log_softmax",
    "torch.logsumexp",
    "torch.nn.functional.softmax",
    "torch.nn.functional.log_softmax",
    "torch.special.softmax",
    "torch.special.log_softmax",
    "torch.special.logsumexp",
    "torch.nn.Softmax",
    "torch.nn.LogSoftmax",
    "Tensor.softmax",
    "Tensor.log_softmax",
    "Tensor.logsumexp",
    "scipy.special.softmax",
    "scipy.special.log_softmax",
    "scipy.special.logsumexp",
    # what computes them for you under another name (a blind red team used these)
    "torch.distributions.Categorical",
    "torch.distributions.categorical.Categorical",
    "torch.distributions.OneHotCategorical",
    "torch.distributions.Multinomial",
    "torch.distributions.RelaxedOneHotCategorical",
    "torch.logcumsumexp",
    "Tensor.logcumsumexp",
    "torch.nn.functional.softmin",
    "torch.nn.Softmin",
    "torch.nn.functional.gumbel_softmax",
    "torch.nn.functional.cross_entropy",
    "torch.nn.CrossEntropyLoss",
    # a second red team's: attention with the logits as its mask is a softmax; a reduce of
    # logaddexp is a logsumexp
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.logaddexp",
    "torch.logaddexp2",
    "Tensor.logaddexp",
    "Tensor.logaddexp2",
    "numpy.logaddexp",
    "numpy.logaddexp2",
    # the same kernels for sparse tensors (bug zoo: `softmax__torch_sparse_kernel`)
    "torch.sparse.softmax",
    "torch.sparse.log_softmax",
)
"""What exercises 1-2 forbid: "do not call torch.softmax, torch.log_softmax, torch.logsumexp (or
their torch.nn.functional twins, or anything that computes them for you)"; scipy's and the
tensor-method forms are the same calls under other names, and the distributions, softmin,
logcumsumexp and cross-entropy compute them. Private and operator-level names (torch._softmax,
torch.ops.aten) and names computed at run time are refused by course_lib.checks.rules itself."""
PPL_RTOL = 1e-3  # = exp(2e-3 / n) - 1 at worst for n >= 2 scored tokens


# ------------------------------------------------------------------------------------------
# comparators
def _f32(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64).float()


def _distribution_diagnosis(got, x: torch.Tensor, log: bool = False) -> str:
    """Extra words for a wrong probability (``log``: log-probability) tensor: which invariant it
    breaks."""
    if not isinstance(got, torch.Tensor) or got.shape != x.shape or not torch.isfinite(got).all():
        return ""
    if log:  # log-probabilities: exp sums to 1, i.e. logsumexp is 0
        lse = torch.logsumexp(got.double(), dim=-1)
        if torch.allclose(lse, torch.zeros_like(lse), atol=1e-4):
            return ""
        return (
            "; exp of each row should sum to 1 (logsumexp 0) along the last dim, but one of "
            "yours has "
            f"logsumexp {lse.reshape(-1)[0].item():.4g}"
        )
    sums = got.double().sum(dim=-1)
    if torch.allclose(sums, torch.ones_like(sums), atol=1e-4):
        return ""
    if x.ndim >= 2:
        cols = got.double().sum(dim=0)
        if torch.allclose(cols, torch.ones_like(cols), atol=1e-4):
            return (
                "; your values sum to 1 along dim 0 instead of the last dim: normalise with dim=-1"
            )
    return (
        "; each row should sum to 1 along the last dim, but one of yours sums to "
        f"{sums.reshape(-1)[0].item():.4g}"
    )


def probs_close(
    rtol32: float = 1e-5, atol32: float = 1e-6, log: bool = False, check_dtype: bool = True
):
    """allclose with a tolerance by dtype (float64 answers must be float64-accurate) plus a
    diagnosis.

    ``log`` (log-probabilities): float32 cannot represent ``z - logsumexp(z)`` better than a few
    ulps of the largest |z| (logits near 1000 have ulp 6e-5), so the absolute tolerance grows with
    the input's size: 8 ulps of max |z| in float32, which torch's own ``z - logsumexp(z)`` meets."""
    tight = allclose(rtol=1e-10, atol=1e-12, check_dtype=check_dtype)

    def compare(expected, got, case: Case) -> str | None:
        f64 = isinstance(expected, torch.Tensor) and expected.dtype == torch.float64
        atol = atol32
        x = case.args[0] if case.args and isinstance(case.args[0], torch.Tensor) else None
        if log and x is not None and x.numel() and not f64:
            finite = x[torch.isfinite(x)]
            if finite.numel():
                atol = max(atol32, 8 * 2.0**-24 * float(finite.abs().max()))
        msg = (tight if f64 else allclose(rtol=rtol32, atol=atol, check_dtype=check_dtype))(
            expected, got, case
        )
        if msg is not None and x is not None:
            msg += _distribution_diagnosis(got, x, log=log)
        if (
            msg is None
            and not log
            and x is not None
            and isinstance(got, torch.Tensor)
            and got.shape == x.shape
        ):
            # exp(-inf) is exactly 0: a masked token given 1e-30 "to avoid zeros" passes any
            # tolerance
            masked = x == -math.inf
            if masked.any() and bool((got[masked] != 0).any()):
                msg = (
                    "a token whose logit is -inf (masked) must get probability exactly 0; one of "
                    "yours "
                    f"gets {float(got[masked].abs().max()):.3g}"
                )
        return msg

    return compare


def temperature_close(rtol32: float = 1e-5, atol32: float = 1e-6):
    """probs_close, plus a diagnosis of the notes' T = 0 mistake (one-hot logits fed to softmax)."""
    base = probs_close(rtol32, atol32)

    def compare(expected, got, case: Case) -> str | None:
        msg = base(expected, got, case)
        if (
            msg is None
            or len(case.args) < 2
            or case.args[1] != 0
            or not isinstance(got, torch.Tensor)
        ):
            return msg
        x = case.args[0]
        seed_like = torch.softmax(
            torch.nn.functional.one_hot(x.argmax(dim=-1), x.shape[-1]).double(), dim=-1
        )
        if got.shape == x.shape and torch.allclose(got.double(), seed_like, atol=1e-4):
            msg += (
                "; this is softmax of a one-hot *logit* vector (the notes' apply_temperature): at "
                "T=0 return the one-hot *probabilities* directly, with no softmax afterwards"
            )
        return msg

    return compare


def entropy_close():
    """probs_close, plus a diagnosis for entropies in bits."""
    # the text promises no dtype: a float64 entropy is correct
    base = probs_close(check_dtype=False)

    def compare(expected, got, case: Case) -> str | None:
        msg = base(expected, got, case)
        if msg is None or not isinstance(got, torch.Tensor) or got.shape != expected.shape:
            return msg
        e, g = expected.double(), got.double()
        # name the mistake only when it reproduces the student's values and they differ visibly from
        # ours
        if torch.allclose(g * math.log(2), e, rtol=1e-4, atol=0) and not torch.allclose(
            g, e, rtol=1e-2, atol=0
        ):
            msg += "; your values are in bits (log2): use the natural log for nats"
        return msg

    return compare


def logprob_close(atol: float):
    """A number within `atol` nats (the check's ``Contract(number=True)`` refuses a tensor)."""
    cmp = allclose(rtol=0.0, atol=atol)

    def compare(expected, got, case: Case) -> str | None:
        msg = cmp(expected, got, case)
        if msg is None:
            return None
        try:
            g = float(got)
        except (TypeError, ValueError, RuntimeError):
            return msg
        if g > 0:
            msg += (
                "; a log-probability is <= 0 (did you sum probabilities, or forget the minus sign?)"
            )
        return msg

    return compare


# ------------------------------------------------------------------------------------------------
# softmax
SEED = [2.0, 1.0, 0.5, 0.1]
# The notes' published table for SEED at temperatures 0.5, 1, 2 (3 decimals).
SEED_TABLE = {
    0.5: [0.828, 0.112, 0.041, 0.019],
    1.0: [0.575, 0.211, 0.128, 0.086],
    2.0: [0.406, 0.246, 0.192, 0.157],
}
S1 = 1 / (1 + math.exp(-1))  # softmax([a, a-1])[0]


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _torch_softmax64(x: torch.Tensor) -> torch.Tensor:
    """Second implementation: torch's own softmax in float64, cast back to x's dtype."""
    return torch.softmax(x.double(), dim=-1).to(x.dtype)


def _softmax_cases() -> list[Case]:
    e = [math.exp(v) for v in SEED]
    seed_exact = [v / sum(e) for v in e]
    scales = torch.tensor([[1000.0, 999.0, 998.0], [0.0, -1.0, -2.0]])
    row = [1, math.exp(-1), math.exp(-2)]
    row = [v / sum(row) for v in row]
    r64 = torch.randn(2, 3, 5, generator=_gen(0), dtype=torch.float64) * 4
    sq = torch.randn(4, 4, generator=_gen(1)) * 3
    return [
        Case(
            (torch.tensor(SEED),),
            label="seed example [2.0, 1.0, 0.5, 0.1]",
            expected=_f32(seed_exact),
        ),
        Case(
            (torch.tensor(SEED),),
            label="seed table at T=1 (3 decimals)",
            expected=_f32(SEED_TABLE[1.0]),
            compare=allclose(rtol=0, atol=5e-4),
        ),
        Case(
            (torch.tensor([1000.0, 999.0]),),
            label="[1000, 999]: exp(1000) overflows",
            expected=_f32([S1, 1 - S1]),
        ),
        Case(
            (torch.tensor([500.0, -500.0]),),
            label="[500, -500]: far apart, exp(500) overflows float32",
            expected=_f32([1.0, 0.0]),
        ),
        Case(
            (torch.full((4,), 3.0),),
            label="equal logits -> uniform",
            expected=torch.full((4,), 0.25),
        ),
        Case(
            (torch.tensor([0.0, -math.inf, 1.0]),),
            label="-inf logit gets probability 0",
            expected=_f32([1 / (1 + math.e), 0.0, math.e / (1 + math.e)]),
        ),
        Case(
            (scales,),
            label="batch [2, 3]: rows at very different scales",
            expected=_f32([row, row]),
        ),
        Case(
            (sq,),
            label="square batch [4, 4] (normalise rows, not columns)",
            expected=_torch_softmax64(sq),
        ),
        Case((r64,), label="float64 input of shape [2, 3, 5]", expected=_torch_softmax64(r64)),
    ]


def _log_softmax_cases() -> list[Case]:
    e = [math.exp(v) for v in SEED]
    seed_exact = [v - math.log(sum(e)) for v in SEED]
    l1 = -math.log1p(math.exp(-1))  # log(1 / (1 + e^-1))
    scales = torch.tensor([[1000.0, 999.0, 998.0], [0.0, -1.0, -2.0]])
    lse = math.log(1 + math.exp(-1) + math.exp(-2))
    row = [-lse, -1 - lse, -2 - lse]
    r64 = torch.randn(2, 3, 5, generator=_gen(2), dtype=torch.float64) * 4
    sq = torch.randn(4, 4, generator=_gen(3)) * 3
    return [
        Case(
            (torch.tensor(SEED),),
            label="seed example [2.0, 1.0, 0.5, 0.1]",
            expected=_f32(seed_exact),
        ),
        Case(
            (torch.tensor([0.0, -200.0]),),
            label="[0, -200]: softmax underflows to 0, log(0) = -inf",
            expected=_f32([0.0, -200.0]),
        ),
        Case((torch.tensor([1000.0, 0.0]),), label="[1000, 0]", expected=_f32([0.0, -1000.0])),
        Case(
            (torch.tensor([1000.0, 999.0]),),
            label="[1000, 999]: exp(1000) overflows",
            expected=_f32([l1, l1 - 1]),
        ),
        Case(
            (torch.tensor([0.0, -math.inf, 1.0]),),
            label="-inf logit stays -inf",
            expected=_f32([-math.log1p(math.e), -math.inf, 1 - math.log1p(math.e)]),
        ),
        Case(
            (scales,),
            label="batch [2, 3]: rows at very different scales",
            expected=_f32([row, row]),
        ),
        Case(
            (sq,),
            label="square batch [4, 4] (normalise rows, not columns)",
            expected=torch.log_softmax(sq.double(), dim=-1).float(),
        ),
        Case(
            (r64,),
            label="float64 input of shape [2, 3, 5]",
            expected=torch.log_softmax(r64, dim=-1),
        ),
    ]


# ----------------------------------------------------------------------------------------------
# temperature
def _temperature_cases() -> list[Case]:
    seed = torch.tensor(SEED)
    near = torch.tensor([10.0, 9.5])
    wide = torch.tensor([0.0, 1.0, -math.inf, 2.0])
    r64 = torch.randn(2, 6, generator=_gen(4), dtype=torch.float64) * 3
    cases = [
        Case(
            (seed, T),
            label=f"seed table at T={T:g} (3 decimals)",
            expected=_f32(p),
            compare=allclose(rtol=0, atol=5e-4),
        )
        for T, p in SEED_TABLE.items()
    ]
    cases += [
        Case(
            (seed, 0),
            label="T=0 is greedy: exact one-hot",
            expected=_f32([1, 0, 0, 0]),
            compare=temperature_close(rtol32=0, atol32=0),
        ),
        Case(
            (torch.tensor([1.0, 3.0, 3.0, -math.inf]), 0),
            label="T=0 with a tie: split evenly",
            expected=_f32([0, 0.5, 0.5, 0]),
            compare=temperature_close(rtol32=0, atol32=1e-7),
        ),
        Case(
            (torch.tensor([[0.0, 5.0, 5.0, 5.0], [2.0, -1.0, 2.0, 0.0]]), 0.0),
            label="T=0 on a batch with ties",
            expected=_f32([[0, 1 / 3, 1 / 3, 1 / 3], [0.5, 0, 0.5, 0]]),
            compare=temperature_close(rtol32=0, atol32=1e-7),
        ),
        Case(
            (torch.tensor([3.0, 3.00001, -1.0]), 0),
            label="T=0 on a near tie [3, 3.00001, -1]: no tie, one-hot",
            expected=_f32([0, 1, 0]),
            compare=temperature_close(rtol32=0, atol32=0),
        ),
        Case(
            (near, 0.01),
            label="T=0.01 on [10, 9.5]: logits / T = [1000, 950]",
            expected=_f32([1 / (1 + math.exp(-50)), math.exp(-50) / (1 + math.exp(-50))]),
        ),
        Case(
            (seed, 1e-6),
            label="tiny T=1e-6 (not 0): essentially one-hot",
            expected=_f32([1, 0, 0, 0]),
        ),
        Case(
            (seed, 1e6),
            label="huge T=1e6: essentially uniform",
            expected=_torch_softmax64(seed / 1e6),
        ),
        Case((wide, 2.0), label="-inf stays at probability 0", expected=_torch_softmax64(wide / 2)),
        Case(
            (r64, 0.7), label="float64 batch [2, 6] at T=0.7", expected=_torch_softmax64(r64 / 0.7)
        ),
        Case((seed, 2), label="T given as the int 2", expected=_torch_softmax64(seed / 2)),
        # issue 35: the text's "every step in its dtype, the T=0 case too", enforced here, not only
        # at grading
        Case(
            (
                torch.tensor(
                    [[1.0, 3.0, 3.0, -math.inf], [0.5, -2.0, 0.25, 0.0]], dtype=torch.float64
                ),
                0,
            ),
            label="float64 logits at T=0: float64 probabilities, ties split evenly",
            expected=torch.tensor(
                [[0.0, 0.5, 0.5, 0.0], [1.0, 0.0, 0.0, 0.0]], dtype=torch.float64
            ),
            compare=temperature_close(rtol32=0, atol32=0),
        ),
    ]
    cases += raises_case("ValueError", seed, -1.0, label="T=-1 must raise ValueError")
    return cases


# ------------------------------------------------------------------------------------------ entropy
def _entropy_cases() -> list[Case]:
    p64 = torch.softmax(torch.randn(3, 5, generator=_gen(5), dtype=torch.float64) * 2, dim=-1)
    p64[0, 1] = 0.0
    p64[0] /= p64[0].sum()
    return [
        Case(
            (torch.full((4,), 0.25),),
            label="uniform over 4: log 4",
            expected=torch.tensor(math.log(4)),
        ),
        Case(
            (torch.tensor([0.0, 1.0, 0.0, 0.0]),),
            label="one-hot: 0 (0 * log 0 = 0, no NaN)",
            expected=torch.tensor(0.0),
        ),
        Case(
            (torch.tensor([0.5, 0.25, 0.25]),),
            label="[0.5, 0.25, 0.25]: 1.5 log 2 nats (not bits)",
            expected=torch.tensor(1.5 * math.log(2)),
        ),
        Case(
            (torch.tensor([0.9, 0.1, 0.0, 0.0]),),
            label="[0.9, 0.1, 0, 0]",
            expected=torch.tensor(-(0.9 * math.log(0.9) + 0.1 * math.log(0.1))),
        ),
        Case(
            (torch.tensor([[1 / 3, 1 / 3, 1 / 3], [1.0, 0.0, 0.0]]),),
            label="batch [2, 3] -> shape [2]",
            expected=_f32([math.log(3), 0.0]),
        ),
        Case(
            (torch.full((49152,), 1 / 49152),),
            label="uniform over SmolLM2's 49152 tokens: log V",
            expected=torch.tensor(math.log(49152)),
        ),
        Case(
            (p64,),
            label="float64 batch [3, 5] with a zero",
            expected=torch.distributions.Categorical(probs=p64).entropy(),
        ),
    ]


# ---------------------------------------------------------------------------------- log-prob and
# perplexity
def _logprob_cases() -> list[Case]:
    uni, nxt, toy = (
        Resource("nb02_uniform_lm"),
        Resource("nb02_next_id_lm"),
        Resource("nb02_id_tokenizer"),
    )
    cmp = logprob_close(1e-4)  # toy models: exact closed forms, float32 sums of a few terms
    cases = [
        Case(
            (uni, toy, "0 1 2 3 4"),
            label="uniform toy model (V=8), 5 tokens: -4 log 8",
            expected=-4 * math.log(TOY_V),
            compare=cmp,
        ),
        Case(
            (nxt, toy, "0 1 2 3 5"),
            label="next-id toy model, '0 1 2 3 5': 3 log(3/4) + log(1/28)",
            expected=3 * math.log(P_HIT) + math.log(P_MISS),
            compare=cmp,
        ),
        Case(
            (nxt, toy, "7 0 1 2 3 4 5 6"),
            label="next-id toy model, every token predicted: 7 log(3/4)",
            expected=7 * math.log(P_HIT),
            compare=cmp,
        ),
        Case(
            (nxt, toy, "2 2 2"),
            label="next-id toy model, no token predicted: 2 log(1/28)",
            expected=2 * math.log(P_MISS),
            compare=cmp,
        ),
        Case(
            (nxt, toy, LONG_TOY),
            label="next-id toy model, 40 tokens, only the last one missed: 38 log(3/4) + log(1/28)",
            expected=38 * math.log(P_HIT) + math.log(P_MISS),
            compare=cmp,
        ),
    ]
    cases += [
        Case(
            (Resource("smollm2_fp32"), Resource("smollm2_tokenizer"), text),
            label=f"SmolLM2, {text!r} (HF transformers: {lp:.4f})",
            expected=lp,
            compare=logprob_close(LOGPROB_ATOL),
        )
        for text, (n, lp, ppl) in HF_TRUTH.items()
    ]
    # issue 35: the text's "the model runs once, without gradients" enforced here, not only at
    # grading
    cases += [
        Case(
            (Resource("nb02_next_id_lm_nograd"), toy, "3 4 5 1"),
            label="next-id toy model that refuses to run with gradients on, '3 4 5 1': 2 log(3/4) "
            "+ log(1/28)",
            expected=2 * math.log(P_HIT) + math.log(P_MISS),
            compare=cmp,
        ),
        Case(
            (Resource("nb02_next_id_lm_one_pass"), toy, ONE_PASS_TEXT),
            label="next-id toy model that answers one pass over the whole text only, "
            f"{ONE_PASS_TEXT!r}: "
            "4 log(3/4) + log(1/28)",
            expected=4 * math.log(P_HIT) + math.log(P_MISS),
            compare=cmp,
        ),
    ]
    cases += raises_case(
        "ValueError", nxt, toy, "5", label="one token: nothing to score, must raise ValueError"
    )
    return cases


def _perplexity_cases() -> list[Case]:
    uni, nxt, toy = (
        Resource("nb02_uniform_lm"),
        Resource("nb02_next_id_lm"),
        Resource("nb02_id_tokenizer"),
    )
    cmp = allclose(rtol=1e-5, atol=0)
    cases = [
        Case(
            (uni, toy, "0 1 2 3 4"),
            label="uniform toy model: perplexity = V = 8",
            expected=float(TOY_V),
            compare=cmp,
        ),
        Case(
            (uni, toy, "3 3"),
            label="uniform toy model, 2 tokens: still 8 (per-token, not per-text)",
            expected=float(TOY_V),
            compare=cmp,
        ),
        Case(
            (nxt, toy, "0 1 2 3 5"),
            label="next-id toy model, '0 1 2 3 5'",
            expected=math.exp(-(3 * math.log(P_HIT) + math.log(P_MISS)) / 4),
            compare=cmp,
        ),
        Case(
            (nxt, toy, LONG_TOY),
            label="next-id toy model, 40 tokens, only the last one missed",
            expected=math.exp(-(38 * math.log(P_HIT) + math.log(P_MISS)) / 39),
            compare=cmp,
        ),
    ]
    cases += [
        Case(
            (Resource("smollm2_fp32"), Resource("smollm2_tokenizer"), text),
            label=f"SmolLM2, {text!r} (HF transformers: {ppl:.4f})",
            expected=ppl,
            compare=allclose(rtol=PPL_RTOL, atol=0),
        )
        for text, (n, lp, ppl) in HF_TRUTH.items()
    ]
    return cases


CHECKS = [
    Check(
        "softmax",
        "softmax",
        _softmax_cases,
        probs_close(),
        forbidden=SOFTMAX_FORBIDDEN,
        hint="only differences of logits matter: which per-row shift keeps every exponent <= 0? "
        "If a per-row "
        "value does not broadcast against the row, which size-1 dimension is it missing? Never "
        "write into the input.",
    ),
    Check(
        "log_softmax",
        "log_softmax",
        _log_softmax_cases,
        probs_close(rtol32=1e-5, atol32=1e-5, log=True),
        forbidden=SOFTMAX_FORBIDDEN,
        hint="stay in log space, as the formula above the exercise does: run [0., -200.] and "
        "print each intermediate value; which one underflows to 0 or becomes inf?",
    ),
    Check(
        "probs_at_temperature",
        "probs_at_temperature",
        _temperature_cases,
        temperature_close(),
        hint="check what T divides in the formula p_i(T), and that T == 0 returns the limit "
        "distribution without "
        "dividing (ties split evenly); T < 0 raises ValueError. For T = 1e-6, print logits / T: "
        "what overflows?",
    ),
    Check(
        "entropy",
        "entropy",
        _entropy_cases,
        entropy_close(),
        hint="run a one-hot distribution and print 0 * torch.log(torch.tensor(0.)): an entry with "
        "p == 0 must add exactly 0. Natural log, summed over the last dim only.",
    ),
    Check(
        "sequence_logprob",
        "sequence_logprob",
        _logprob_cases,
        logprob_close(LOGPROB_ATOL),
        contract=Contract(number=True),
        uses=("log_softmax",),
        hint="print the shapes of the logits you score and of the ids you pick: which position's "
        "logits predict "
        "token 2, and do you score exactly n - 1 tokens? Sum log-probabilities, return a Python "
        "float.",
    ),
    Check(
        "perplexity",
        "perplexity",
        _perplexity_cases,
        allclose(rtol=PPL_RTOL, atol=0),
        contract=Contract(number=True),
        uses=("sequence_logprob",),
        hint="check the sign and what you average over: a uniform toy model over V tokens must "
        "give exactly V, and n tokens give n - 1 scored tokens.",
    ),
]
