"""Visible checks for notebook 01 (the inference pipeline): token pieces, tokens per word, the
notes' EmbeddingLayer, embedding memory, the causal mask, causal attention, top-k next tokens,
recompute cost.

Every expected value here is an independent truth, never the reference solution's output:
- the notes' published ids for "Hello, how are you today?" under cl100k_base ([9906, 11, 1268, 527,
499, 3432,
  30]) and the pieces they spell, and the model tokenizer's published pre-tokenizer rule (every
  digit alone);
- invariants: the pieces of a text concatenate to its UTF-8 bytes; attention output at position i
does not
  change when only positions after i change;
- exact maths: table lookups, products, sums of an arithmetic series, attention with all-zero
queries (the
  running mean of the values), a closed-form two-token attention;
- a second implementation: ``torch.nn.functional.scaled_dot_product_attention(is_causal=True)`` in
float64,
  and, for the real model, Hugging Face transformers' next-token probabilities on the same GGUF
  weights;
- a toy bigram language model whose next-token probabilities are exact powers of two.

The class exercise (``EmbeddingLayer``) is checked through the notebook's given helper
``run_embedding_layer(token_table, position_table, token_ids)``: it builds the student's class,
loads the given tables and returns a tensor, so the check stays data (JSON in, JSON out) like every
other one.
"""

from __future__ import annotations

import math
from typing import Any

import torch

# The notebook-02 module registers the shared resources "smollm2_fp32" and "smollm2_tokenizer" (one
# load per process, shared by every notebook's checks); importing it makes sure they exist when only
# this module is used.
import course_lib.checks.logits_softmax  # noqa: F401
from course_lib.checks.engine import (
    Case,
    Check,
    Contract,
    Resource,
    allclose,
    exact,
    register_resource,
)
from course_lib.checks.toy_models import RefusingTableLM, no_grad_refusal

ASSIGNMENT = "01_pipeline_trace"

SEED_TEXT = "Hello, how are you today?"
SEED_IDS = [9906, 11, 1268, 527, 499, 3432, 30]  # the notes' published cl100k_base ids
SEED_PIECES = [b"Hello", b",", b" how", b" are", b" you", b" today", b"?"]


def _cl100k():
    from course_lib.tokenizer import cl100k_base

    return cl100k_base()


register_resource("cl100k_base", _cl100k)


# ------------------------------------------------------------------------------------------- toy
# model
class ToyTokenizer:
    """`encode("3 1 4") == [3, 1, 4]`: token ids written as text; accepts and ignores tiktoken's
    keywords."""

    def encode(self, text: str, **kwargs) -> list[int]:
        return [int(w) for w in text.split()]

    def decode(self, ids) -> str:
        return " ".join(str(int(i)) for i in ids)


class ToyBigramLM(torch.nn.Module):
    """ids (B, T) -> logits (B, T, V) that depend only on the token at each position (like
    model(idx))."""

    def __init__(self, table: torch.Tensor):
        super().__init__()
        self.table = torch.nn.Parameter(table.float(), requires_grad=False)  # (V, V)

    def forward(self, idx: torch.Tensor, **kwargs) -> torch.Tensor:
        return self.table[idx]  # (B, T, V)


TOY_V = 8


def toy_pow2_lm() -> ToyBigramLM:
    """After token i, token (i + j) % 8 has probability 2^(7 - j) / 255: exact, all different."""
    j = torch.arange(TOY_V)
    logits = (TOY_V - 1 - j).double() * math.log(2.0)  # log 2^(7 - j)
    table = torch.stack([logits.roll(i) for i in range(TOY_V)])  # row i: logit of token (i + j) % V
    return ToyBigramLM(table)


def toy_pow2_probs(last: int) -> list[tuple[int, float]]:
    """The toy model's exact next-token distribution after token `last`, most likely first."""
    return [((last + j) % TOY_V, 2.0 ** (TOY_V - 1 - j) / (2.0**TOY_V - 1)) for j in range(TOY_V)]


def _pow2_bf16() -> ToyBigramLM:
    """The toy model with bfloat16 logits (as a half-precision model returns them)."""
    lm = toy_pow2_lm()
    lm.table.data = lm.table.data.bfloat16()
    return lm


register_resource("nb01_pow2_lm", toy_pow2_lm)
register_resource("nb01_pow2_lm_bf16", _pow2_bf16)
register_resource(
    "nb01_pow2_lm_nograd", lambda: RefusingTableLM(toy_pow2_lm().table.data, no_grad_refusal)
)
register_resource("nb01_id_tokenizer", ToyTokenizer)


# ------------------------------------------------------------------------------------ exercise 1:
# pieces
def pieces_compare(expected: Any, got: Any, case: Case) -> str | None:
    """Exact list of bytes, with a diagnosis of the usual mistakes (str pieces, U+FFFD, missing
    spaces)."""
    msg = exact()(expected, got, case)
    if msg is None:
        return None
    if isinstance(got, list) and got and all(isinstance(p, str) for p in got):
        return (
            msg
            + "; return bytes, not str: a token can hold part of a UTF-8 character, which no str "
            "can (a tiktoken Encoding can give the bytes of one token: look among its methods)"
        )
    if isinstance(got, list) and all(isinstance(p, bytes) for p in got):
        joined, want = b"".join(got), b"".join(expected)
        if "\ufffd".encode() in joined and "\ufffd".encode() not in want:
            return (
                msg
                + "; your pieces contain U+FFFD (the replacement character): decoding one token "
                "to text and encoding it again loses the bytes of a split character"
            )
        if joined != want:
            # show where they part, not two prefixes cut at the same length (they can print
            # identical)
            i = next(
                (k for k, (a, b) in enumerate(zip(joined, want)) if a != b),
                min(len(joined), len(want)),
            )
            lo = max(0, i - 20)
            return (
                msg
                + f"; your pieces join to {len(joined)} bytes, the text's UTF-8 is {len(want)}: "
                "they part at "
                f"byte {i}, yours ...{joined[lo : i + 20]!r}, the text's ...{want[lo : i + 20]!r}"
            )
    return msg


def _pieces_cases() -> list[Case]:
    cl, sm = Resource("cl100k_base"), Resource("smollm2_tokenizer")
    return [
        Case(
            (cl, SEED_TEXT),
            label=f"cl100k_base, the notes' {SEED_TEXT!r} (ids {SEED_IDS})",
            expected=SEED_PIECES,
        ),
        Case((sm, SEED_TEXT), label=f"SmolLM2's tokenizer, {SEED_TEXT!r}", expected=SEED_PIECES),
        Case(
            (cl, "🙂"),
            label="cl100k_base, '🙂' (4 UTF-8 bytes, 2 tokens: the emoji is split)",
            expected=[b"\xf0\x9f", b"\x99\x82"],
        ),
        Case(
            (sm, "2024 12345"),
            label="SmolLM2's tokenizer, '2024 12345' (every digit is its own token)",
            expected=[b"2", b"0", b"2", b"4", b" ", b"1", b"2", b"3", b"4", b"5"],
        ),
        Case(
            (cl, "naïve café"),
            label="cl100k_base, 'naïve café' (ï is a token of its own)",
            expected=[b"na", "ï".encode(), b"ve", " café".encode()],
        ),
        Case((cl, ""), label="the empty string has no tokens", expected=[]),
    ]


# ------------------------------------------------------------------------------- exercise 2:
# tokens/word
def _per_word_cases() -> list[Case]:
    cl, sm = Resource("cl100k_base"), Resource("smollm2_tokenizer")
    cmp = allclose(rtol=1e-12, atol=0)
    return [
        Case(
            (cl, SEED_TEXT),
            label="cl100k_base, the notes' sentence: 7 tokens / 5 words",
            expected=7 / 5,
            compare=cmp,
        ),
        Case(
            (sm, "2024 12345"),
            label="SmolLM2, '2024 12345': 9 digits + 1 space = 10 tokens / 2 words",
            expected=10 / 2,
            compare=cmp,
        ),
        Case((cl, "one"), label="cl100k_base, 'one': 1 token / 1 word", expected=1.0, compare=cmp),
        Case(
            (cl, "  one   two\nthree\t"),
            label="cl100k_base, '  one   two\\nthree\\t': 7 tokens / 3 words "
            "(words are separated by any run of whitespace: str.split())",
            expected=7 / 3,
            compare=cmp,
        ),
    ]


# ---------------------------------------------------------------------------- exercise 3:
# EmbeddingLayer A class builds a module, and a module cannot cross a process boundary as JSON. So
# the checks call the notebook's given (not graded) helper `run_embedding_layer(token_table,
# position_table, token_ids)`, which builds the student's EmbeddingLayer, copies the given tables
# into it and returns its output tensor.
def embedding_inputs(vocab: int, d: int, max_len: int, B: int, T: int, seed: int) -> tuple:
    """(token_table, position_table, token_ids) drawn from a seeded generator."""
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(vocab, d, generator=g),
        torch.randn(max_len, d, generator=g),
        torch.randint(0, vocab, (B, T), generator=g),
    )


def embedding_compare(expected: Any, got: Any, case: Case) -> str | None:
    """Exact lookups (float32 sums), with a diagnosis of the usual position mistakes."""
    msg = allclose(rtol=1e-6, atol=1e-6)(expected, got, case)
    if msg is None or not (isinstance(got, torch.Tensor) and got.shape == expected.shape):
        return msg
    tok_w, pos_w, ids = case.args
    T = ids.shape[1]
    if torch.allclose(got, tok_w[ids], atol=1e-6):
        return msg + "; you returned the token embeddings only: add the position embeddings"
    if ids.max() < pos_w.shape[0] and torch.allclose(got, tok_w[ids] + pos_w[ids], atol=1e-6):
        return msg + "; you looked the positions up with the token ids: use torch.arange(seq_len)"
    if T < pos_w.shape[0] and torch.allclose(got, tok_w[ids] + pos_w[1 : T + 1], atol=1e-6):
        return msg + "; positions start at 0, not 1"
    return msg


def _embedding_cases() -> list[Case]:
    cases = []
    for vocab, d, max_len, B, T, seed in [
        (50, 8, 16, 1, 5, 0),
        (50, 8, 16, 2, 16, 1),
        (100, 4, 7, 3, 1, 2),
    ]:
        tok_w, pos_w, ids = embedding_inputs(vocab, d, max_len, B, T, seed)
        # (B, T, d)
        cases.append(
            Case(
                (tok_w, pos_w, ids),
                expected=tok_w[ids] + pos_w[torch.arange(T)],
                label=f"tables ({vocab}, {d}) and ({max_len}, {d}), token_ids of shape ({B}, {T}): "
                "token row + position row, exactly",
            )
        )
    return cases


# ---------------------------------------------------------------------------- exercise 4: memory
# formula
BYTES_DIAGNOSES = (
    (1 / 2, "bytes_per_value? a value takes bytes_per_value bytes"),
    (1e-9, "do not convert to GB: return bytes"),
    (2**-30, "do not convert to GiB: return bytes"),
    (8, "bytes, not bits"),
    (2, "one table: the count is vocab_size * d_model values"),
)


def same_number(rtol: float = 1e-12, integer: bool = False, diagnoses: tuple = ()):
    """An int or float equal to the expected number (a float must hold an integral count exactly);
    with ``integer``, a Python int (a count). ``diagnoses`` are (factor, why) pairs, named only when
    the student's value is exactly that factor times the expected one (and differs from it)."""

    def compare(expected: Any, got: Any, case: Case) -> str | None:
        if isinstance(got, torch.Tensor) and got.ndim == 0 and not integer:
            got = got.item()
        if type(got) is bool or not isinstance(got, (int, float)):
            return (
                f"expected {'an int' if integer else 'a number'}, got {type(got).__name__} {got!r}"[
                    :200
                ]
            )
        if integer and not isinstance(got, int):
            return (
                f"expected an int (a count of positions), got {type(got).__name__} {got!r}: "
                "use // or int()"
            )
        if abs(got - expected) <= rtol * abs(expected):
            return None
        msg = f"expected {expected:,}, got {got:,}"
        if expected and got:
            r = got / expected
            for factor, why in diagnoses:
                if math.isclose(r, factor, rel_tol=1e-9):
                    msg += f" (yours is {r:g} x the answer: {why})"
        return msg

    return compare


def _memory_cases() -> list[Case]:
    return [
        Case(
            (100_000, 12288, 2), label="the notes' 100K x 12288 x 2 bytes", expected=2_457_600_000
        ),
        Case((49152, 576, 4), label="SmolLM2's table in float32", expected=49152 * 576 * 4),
        Case((49152, 576, 2), label="SmolLM2's table in bfloat16", expected=56_623_104),
        Case(
            (50257, 12288, 2), label="GPT-3's vocabulary and width in fp16", expected=1_235_116_032
        ),
        Case((10, 3, 1), label="10 x 3 x 1 byte", expected=30),
    ]


# -------------------------------------------------------------------------------- exercise 5: the
# mask
def mask_compare(expected: Any, got: Any, case: Case) -> str | None:
    """Exact bool mask; says which convention or dtype went wrong."""
    msg = exact()(expected, got, case)
    if msg is None:
        return None
    if isinstance(got, torch.Tensor) and got.shape == expected.shape:
        if got.dtype != torch.bool:
            if torch.equal(got.float(), expected.float()):
                return msg + "; right pattern, but return a bool tensor (True = may attend)"
            return msg + "; return a bool tensor: True where query i may read key j (j <= i)"
        if torch.equal(got, ~expected):
            return (
                msg + "; this is the opposite convention (True = blocked, as nn.MultiheadAttention "
                "wants); here True means 'may attend', as in F.scaled_dot_product_attention"
            )
        if torch.equal(got, expected.T):
            return (
                msg
                + "; this lets each position see the future, not the past: lower triangle (tril), "
                "not upper"
            )
        if torch.equal(got, expected.tril(-1)):
            return msg + "; each position must also see itself (the diagonal is True)"
    return msg


def _mask_cases() -> list[Case]:
    return [
        Case((1,), label="T=1: [[True]]", expected=torch.tensor([[True]])),
        Case(
            (4,),
            label="T=4: True on and below the diagonal",
            expected=torch.tensor(
                [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]], dtype=torch.bool
            ),
        ),
        Case(
            (7,),
            label="T=7: entry [i, j] is (j <= i)",
            expected=torch.arange(7)[None, :] <= torch.arange(7)[:, None],
        ),
    ]


# ------------------------------------------------------------------------- exercise 6: causal
# attention
def sdpa_causal(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Second implementation: torch's fused attention with its own causal mask, in float64."""
    out = torch.nn.functional.scaled_dot_product_attention(
        q.double(), k.double(), v.double(), is_causal=True
    )
    return out.to(q.dtype)


def future_invariance(changed_after: int):
    """Comparator for a batch of 2 that differ only after position `changed_after`: the outputs at
    positions
    0..changed_after must be equal across the batch (then the usual value comparison)."""
    cmp = allclose(rtol=1e-5, atol=1e-6)

    def compare(expected: Any, got: Any, case: Case) -> str | None:
        if (
            isinstance(got, torch.Tensor)
            and got.shape == expected.shape
            and torch.isfinite(got).all()
        ):
            a, b = got[0, : changed_after + 1], got[1, : changed_after + 1]
            if not torch.allclose(a, b, rtol=0, atol=1e-6):
                worst = int((a - b).abs().amax(-1).argmax())
                return (
                    f"the two sequences differ only after position {changed_after}, but your "
                    "output at position "
                    f"{worst} differs between them: position {worst} reads the future. Mask keys "
                    "j > i with -inf before the softmax"
                )
        return cmp(expected, got, case)

    return compare


def _g(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _attention_cases() -> list[Case]:
    k0, v0 = torch.randn(1, 5, 4, generator=_g(0)), torch.randn(1, 5, 4, generator=_g(1))
    running_mean = v0.cumsum(1) / torch.arange(1, 6).reshape(1, 5, 1)
    q1, k1, v1 = (torch.randn(2, 6, 8, generator=_g(s), dtype=torch.float64) for s in (2, 3, 4))
    base = torch.randn(3, 7, 8, generator=_g(5))
    x = torch.stack([base, base.clone()])  # (2 sequences, q/k/v, T, d)
    # change positions 3.. of the 2nd sequence
    x[1, :, 3:] = torch.randn(3, 4, 8, generator=_g(6)) * 3
    qf, kf, vf = x[:, 0], x[:, 1], x[:, 2]
    # T=2, d=4 (sqrt(d) = 2): query 1 scores key 0 with 4/2 = 2 and key 1 with 0/2 = 0.
    q2 = torch.tensor([[[0.0, 0, 0, 0], [2, 0, 0, 0]]])
    k2 = torch.tensor([[[2.0, 0, 0, 0], [0, 0, 0, 0]]])
    v2 = torch.tensor([[[1.0, 0, 0, 0], [0, 1, 0, 0]]])
    w = math.exp(2) / (math.exp(2) + 1)
    q4, k4, v4 = (torch.randn(2, 3, 5, 8, generator=_g(s)) for s in (7, 8, 9))
    return [
        Case(
            (torch.zeros(1, 5, 4), k0, v0),
            label="all-zero queries: output i = mean of v[0..i]",
            expected=running_mean,
        ),
        Case(
            (q2, k2, v2),
            label="T=2, d=4: position 1 weighs v0, v1 by e^2, 1 (scores / sqrt(d))",
            expected=torch.tensor([[[1.0, 0, 0, 0], [w, 1 - w, 0, 0]]]),
        ),
        Case(
            (qf, kf, vf),
            label="2 sequences equal up to position 2, different after it",
            expected=sdpa_causal(qf, kf, vf),
            compare=future_invariance(2),
        ),
        Case(
            (q1, k1, v1),
            label="float64 [2, 6, 8] vs torch's scaled_dot_product_attention(is_causal=True)",
            expected=sdpa_causal(q1, k1, v1),
            compare=allclose(rtol=1e-10, atol=1e-12),
        ),
        Case(
            (q4, k4, v4), label="4-D [batch 2, heads 3, T 5, d 8]", expected=sdpa_causal(q4, k4, v4)
        ),
        Case(
            (q4[:, :, :1], k4[:, :, :1], v4[:, :, :1]),
            label="T=1: the output is v",
            expected=v4[:, :, :1],
        ),
    ]


# ------------------------------------------------------------------------------ exercise 7: top-k
# tokens Hugging Face transformers 5.24 on the same GGUF file (float32, CPU), ids from course_lib's
# tokenizer: softmax(model(ids).logits[0, -1]) in float64, its 10 largest. Script:
# docs/notebook01.md.
HF_TOP10 = {
    "The capital of France is": [
        (7042, 0.7725319204867576),
        (260, 0.06452200701487502),
        (4528, 0.012470820939135808),
        (2250, 0.009853985534843379),
        (1315, 0.009299222036846036),
        (5145, 0.008876020290776858),
        (216, 0.007328141773141666),
        (441, 0.007215761146404847),
        (3692, 0.0064373297539984066),
        (3575, 0.004058010410314365),
    ],
    "1, 2, 3, 4,": [
        (216, 0.9259564388099926),
        (284, 0.027948611495154582),
        (4563, 0.006689689674741391),
        (2686, 0.004623042422182703),
        (731, 0.004468405545367935),
    ],
}
TOPK_RTOL, TOPK_ATOL = 1e-4, 1e-6  # fp32 on CPU vs GPU moves probabilities by ~1e-6 relative


def _as_pairs(got: Any) -> tuple[list[tuple[int, float]] | None, str | None]:
    if not isinstance(got, (list, tuple)):
        return None, f"expected a list of (token_id, probability) pairs, got {type(got).__name__}"
    pairs = []
    for i, item in enumerate(got):
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            return None, f"item {i} should be a (token_id, probability) pair, got {item!r}"[:200]
        t, p = item
        if type(t) is bool or not isinstance(t, int):
            return (
                None,
                f"item {i}: the token id should be an int, got {type(t).__name__} (use int(...) "
                "or .item())",
            )
        if type(p) is bool or not isinstance(p, (int, float)):
            return (
                None,
                f"item {i}: the probability should be a float, got {type(p).__name__} (use "
                "float(...))",
            )
        pairs.append((int(t), float(p)))
    return pairs, None


def topk_compare(expected: Any, got: Any, case: Case) -> str | None:
    """Same ids in the same order; probabilities within TOPK_RTOL/TOPK_ATOL; diagnoses for common
    mistakes."""
    pairs, err = _as_pairs(got)
    if err:
        return err
    k = len(expected)
    if len(pairs) != k:
        return f"expected {k} pairs, got {len(pairs)}"
    ids, probs = [t for t, _ in pairs], [p for _, p in pairs]
    want_ids, want_p = [t for t, _ in expected], [p for _, p in expected]
    if any(p < 0 or p > 1 for p in probs):
        return (
            f"probabilities must lie in [0, 1], got {[round(p, 4) for p in probs]}: apply "
            "softmax to the logits"
        )
    if probs != sorted(probs, reverse=True):
        return (
            "list the most likely token first (descending probability), got "
            f"{[round(p, 4) for p in probs]}"
        )
    if ids != want_ids:
        extra = ""
        if set(ids) == set(want_ids):
            extra = " (right tokens, wrong order)"
        return (
            f"token ids: expected {want_ids}, got {ids}{extra}; use the logits of the LAST position"
        )
    for i, (p, w) in enumerate(zip(probs, want_p)):
        if abs(p - w) > TOPK_ATOL + TOPK_RTOL * abs(w):
            tail = ""
            if (
                k > 1
                and math.isclose(sum(probs), 1.0, rel_tol=1e-4)
                and not math.isclose(sum(want_p), 1.0, rel_tol=1e-4)
            ):
                tail = (
                    "; your k probabilities sum to 1: take the softmax over the whole vocabulary, "
                    "then keep the k largest (do not renormalise them)"
                )
            return (
                f"probability of token {ids[i]} (rank {i + 1}): expected {w:.6g}, got {p:.6g}{tail}"
            )
    return None


def _topk_cases() -> list[Case]:
    lm, toy = Resource("nb01_pow2_lm"), Resource("nb01_id_tokenizer")
    model, tok = Resource("smollm2_fp32"), Resource("smollm2_tokenizer")
    return [
        Case(
            (lm, toy, "3", 3),
            label="toy model, after token 3: p = 128/255, 64/255, 32/255",
            expected=toy_pow2_probs(3)[:3],
        ),
        Case(
            (lm, toy, "0 5 6 1", 4),
            label="toy model, prompt '0 5 6 1': only the last token counts",
            expected=toy_pow2_probs(1)[:4],
        ),
        Case(
            (lm, toy, "2 7", 8),
            label="toy model, k = V = 8: the whole distribution",
            expected=toy_pow2_probs(7),
        ),
        Case(
            (model, tok, "The capital of France is"),
            label="SmolLM2, 'The capital of France is', k left at its default 10 (HF "
            "transformers: ' Paris' 0.7725)",
            expected=HF_TOP10["The capital of France is"],
        ),
        Case(
            (model, tok, "1, 2, 3, 4,", 5),
            label="SmolLM2, '1, 2, 3, 4,', k=5 (HF transformers: ' ' 0.9260: "
            "digits are single tokens, so the space comes first)",
            expected=HF_TOP10["1, 2, 3, 4,"],
        ),
    ]


# ------------------------------------------------------------------------ exercise 8: recompute
# cost
def _positions_cases() -> list[Case]:
    cmp = same_number(integer=True)
    return [
        Case(
            (5, 1), label="one new token: one pass over the 5-token prompt", expected=5, compare=cmp
        ),
        Case((5, 3), label="prompt 5, 3 new tokens: 5 + 6 + 7", expected=18, compare=cmp),
        Case((1, 4), label="prompt 1, 4 new tokens: 1 + 2 + 3 + 4", expected=10, compare=cmp),
        Case((100, 0), label="no new tokens, no passes", expected=0, compare=cmp),
        Case((200, 256), label="prompt 200, 256 new tokens", expected=83_840, compare=cmp),
    ]


CHECKS = [
    Check(
        "token_pieces",
        "token_pieces",
        _pieces_cases,
        pieces_compare,
        hint="each piece must be bytes and b''.join(pieces) must equal text.encode('utf-8'): "
        "check it on '🙂'. What does decoding one token to str do to half a character?",
    ),
    Check(
        "tokens_per_word",
        "tokens_per_word",
        _per_word_cases,
        allclose(rtol=1e-12, atol=0),
        contract=Contract(number=True),
        hint="count tokens with the tokenizer you are given and words as text.split() does; the "
        "notes' sentence under cl100k_base must give 1.4, a float.",
    ),
    Check(
        "embedding_layer",
        "run_embedding_layer",
        _embedding_cases,
        embedding_compare,
        hint="print the shapes of both tables and of the two terms you add for ids of shape (2, "
        "3): which table "
        "has max_seq_len rows, and do positions count from 0 in every row, on the ids' device?",
    ),
    Check(
        "embedding_bytes",
        "embedding_bytes",
        _memory_cases,
        same_number(diagnoses=BYTES_DIAGNOSES),
        hint="check against the notes: 100K x 12288 at 2 bytes per value is ~2.4 GB, so your "
        "function must return ~2.4e9 (bytes, not GB).",
    ),
    Check(
        "causal_mask",
        "causal_mask",
        _mask_cases,
        mask_compare,
        hint="which entries (query i, key j) may be True: is j <= i or j >= i, and is your matrix "
        "bool?",
    ),
    Check(
        "causal_attention",
        "causal_attention",
        _attention_cases,
        allclose(rtol=1e-5, atol=1e-6),
        forbidden=(
            "torch.nn.functional.scaled_dot_product_attention",
            "torch.nn.MultiheadAttention",
            # what nn.MultiheadAttention.forward runs (white-box red team 24, E2)
            "torch.nn.functional.multi_head_attention_forward",
            # the library's layers that hold one as an attribute (white-box red team 25, E11:
            # TransformerEncoderLayer(...).self_attn)
            "torch.nn.TransformerEncoderLayer",
            "torch.nn.TransformerDecoderLayer",
            "torch.nn.TransformerEncoder",
            "torch.nn.TransformerDecoder",
            "torch.nn.Transformer",
        ),
        hint="print the shape after each of the three steps (scores must be [..., T, T]): is the "
        "mask applied "
        "before the softmax, does the softmax run over keys, and is d the size you scale by?",
    ),
    Check(
        "top_k_next_tokens",
        "top_k_next_tokens",
        _topk_cases,
        topk_compare,
        hint="which position's logits predict the next token, and over what do you take the "
        "softmax (the whole "
        "vocabulary, not the k kept)? Python (int, float) pairs, most likely first; ids on the "
        "model's device.",
    ),
    Check(
        "positions_without_cache",
        "positions_without_cache",
        _positions_cases,
        same_number(integer=True),
        hint="write out the passes for prompt_len = 5, n_new = 3 by hand (5 + 6 + 7) and compare "
        "with your function; 0 new tokens cost 0.",
    ),
]
