"""Hidden checks for notebook 01 (the inference pipeline): more cases than the visible ones.

Expected values are the reference solutions' outputs (solutions/01_pipeline_trace), stored by
`python -m autograde release` in autograde/references/01_pipeline_trace.json. Tolerances:
- token pieces, masks, counts: exact;
- attention: rtol 1e-5 / atol 1e-6 in float32, rtol 1e-10 / atol 1e-12 in float64;
- top-k under the real model: same ids in the same order, probabilities within rtol 1e-4 + atol
1e-6.
  The prompts were chosen so that no two of the k + 1 most likely tokens are within 1 % of each
  other, so float32 on a GPU (~1e-6 relative) cannot reorder them.
"""

from __future__ import annotations

import torch

from autograde.hidden._twins import attention_features, embedding_rows, twins
from course_lib.checks import pipeline_trace as _visible
from course_lib.checks import toy_inputs  # noqa: F401 - registers the model on a second device
from course_lib.checks.engine import Case, Check, Contract, Resource, allclose
from course_lib.checks.pipeline_trace import (
    BYTES_DIAGNOSES,
    embedding_compare,
    embedding_inputs,
    future_invariance,
    mask_compare,
    pieces_compare,
    same_number,
    topk_compare,
)

ASSIGNMENT = "01_pipeline_trace"
ATTENTION_FORBIDDEN = (
    "torch.nn.functional.scaled_dot_product_attention",
    "torch.nn.MultiheadAttention",
    "torch.nn.functional.multi_head_attention_forward",
    # the library's layers that hold one as an attribute (white-box red team 25, E11:
    # TransformerEncoderLayer(...).self_attn)
    "torch.nn.TransformerEncoderLayer",
    "torch.nn.TransformerDecoderLayer",
    "torch.nn.TransformerEncoder",
    "torch.nn.TransformerDecoder",
    "torch.nn.Transformer",
)

_TEXTS = [
    "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n",
    "Die Katze schläft auf der Fensterbank.",
    "고양이가 창턱에 앉아 잠을 잔다.",
    "こんにちは世界",
    "I 💜 🦙s and 👩‍💻!",
    "Pi is 3.14159265358979, e is 2.71828.",
    "   leading spaces,\n\n\ttabs and\r\nnewlines   ",
    "Supercalifragilisticexpialidocious antidisestablishmentarianism",
]


# Issue 38: texts at the edges of "every text whose bytes `enc` can all encode": Unicode normal
# forms (an answer that normalises, NFC or NFKC, changes the bytes: a decomposed e + U+0301, A +
# U+030A, o + U+0308; a ligature, a fraction and fullwidth letters that NFKC rewrites), and a
# leading space and a trailing newline, tokens of their own
_EDGE_TEXTS = [
    "cafe\u0301 A\u030angstro\u0308m",
    "\ufb01ne \u00bd \uff46\uff55\uff4c\uff4c",
    " hello world\n",
]
# words separated by U+3000 (the ideographic space: whitespace, not a space, tab or newline; bug
# zoo: `tokens_per_word__ascii_whitespace_only`)
_WIDE_SPACE_TEXT = "\u6771\u4eac\u3000\u5927\u962a\u3000\u540d\u53e4\u5c4b and Kyoto"


def _pieces_cases() -> list[Case]:
    cl, sm = Resource("cl100k_base"), Resource("smollm2_tokenizer")
    return [
        Case((enc, t), label=f"{name}, {t!r}")
        for t in _TEXTS + _EDGE_TEXTS
        for enc, name in ((cl, "cl100k_base"), (sm, "SmolLM2"))
    ]


def _per_word_cases() -> list[Case]:
    cl, sm = Resource("cl100k_base"), Resource("smollm2_tokenizer")
    return [
        Case((enc, t), label=f"{name}, {t!r}")
        for t in _TEXTS[:7] + _EDGE_TEXTS + [_WIDE_SPACE_TEXT]
        for enc, name in ((cl, "cl100k_base"), (sm, "SmolLM2"))
    ]


def _embedding_cases() -> list[Case]:
    specs = [
        (30, 5, 12, 4, 12),
        (30, 5, 12, 2, 3),
        (200, 16, 64, 1, 1),
        (200, 16, 64, 2, 33),
        (200, 16, 64, 1, 64),
        (7, 1, 3, 5, 2),
    ]
    return [
        Case(
            embedding_inputs(v, d, L, B, T, seed=10 + i),
            label=f"tables ({v}, {d}) and ({L}, {d}), ids ({B}, {T})",
        )
        for i, (v, d, L, B, T) in enumerate(specs)
    ]


def _memory_cases() -> list[Case]:
    return [
        Case((v, d, b), label=f"{v} x {d} x {b} bytes")
        for v, d, b in [
            (100277, 4096, 2),
            (32000, 4096, 4),
            (256000, 3072, 2),
            (151936, 896, 2),
            (1, 1, 8),
            (49152, 576, 0.5),
            (3, 5, 0.5),
            (1, 1, 0.5),
            # an odd product past 2^24 (embedding_bytes__float32_tensor_product)
            (100003, 999, 1),
        ]
    ]


def _mask_cases() -> list[Case]:
    return [Case((T,), label=f"T={T}") for T in (2, 3, 5, 16, 64)]


def _g(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _attention_cases() -> list[Case]:
    r = lambda *shape, seed, scale=1.0, dtype=torch.float32: (
        torch.randn(*shape, generator=_g(seed), dtype=dtype) * scale
    )  # noqa: E731
    base = r(3, 9, 16, seed=30)
    x = torch.stack([base, base.clone()])
    x[1, :, 6:] = r(3, 3, 16, seed=31) * 5  # positions 6.. differ
    y = torch.stack([base, base.clone()])
    y[1, :, 1:] = r(3, 8, 16, seed=32)  # everything after position 0 differs
    f64 = allclose(rtol=1e-10, atol=1e-12)
    return [
        Case(
            (r(1, 12, 32, seed=33), r(1, 12, 32, seed=34), r(1, 12, 32, seed=35)),
            label="[1, 12, 32]",
        ),
        Case(
            (
                r(2, 9, 4, 6, seed=36, dtype=torch.float64),
                r(2, 9, 4, 6, seed=37, dtype=torch.float64),
                r(2, 9, 4, 6, seed=38, dtype=torch.float64),
            ),
            label="float64 4-D [2, 9, 4, 6]",
            compare=f64,
        ),
        Case(
            (r(2, 7, 8, seed=39, scale=20), r(2, 7, 8, seed=40, scale=20), r(2, 7, 8, seed=41)),
            label="large scores (q, k ~ N(0, 20^2)): a stable softmax is needed",
        ),
        Case(
            (x[:, 0], x[:, 1], x[:, 2]),
            label="2 sequences equal up to position 5",
            compare=future_invariance(5),
        ),
        Case(
            (y[:, 0], y[:, 1], y[:, 2]),
            label="2 sequences equal only at position 0",
            compare=future_invariance(0),
        ),
        Case((r(3, 1, 5, seed=42), r(3, 1, 5, seed=43), r(3, 1, 5, seed=44)), label="T=1, batch 3"),
        Case(
            (r(1, 64, 64, seed=45), r(1, 64, 64, seed=46), r(1, 64, 64, seed=47)),
            label="T=64, d=64 (one head's size)",
        ),
        # every allowed score is -2e10: a mask filled with a large finite number (-1e9) instead of
        # -inf wins
        Case(
            (torch.full((1, 5, 4), 1e5), torch.full((1, 5, 4), -1e5), r(1, 5, 4, seed=48)),
            label="scores of -2e10 everywhere: masked entries must be -inf, not a large negative "
            "number",
        ),
        # the text: "$d$ in the formula is `q`'s and `k`'s feature size", grading also d_v != d (bug
        # zoo: `causal_attention__scale_by_dv`)
        Case(
            (r(2, 5, 8, seed=49), r(2, 5, 8, seed=50), r(2, 5, 3, seed=51)), label="d = 8, d_v = 3"
        ),
    ]


# Each real-model case costs one forward pass per evaluated function (bug-zoo entries included):
# keep few.
_PROMPTS = [("Once upon a time,", 5), ("import numpy as", 1), ("The opposite of hot is", 6)]


def _topk_cases() -> list[Case]:
    lm, toy = Resource("nb01_pow2_lm"), Resource("nb01_id_tokenizer")
    model, tok = Resource("smollm2_fp32"), Resource("smollm2_tokenizer")
    return (
        [Case((model, tok, p, k), label=f"SmolLM2, {p!r}, k={k}") for p, k in _PROMPTS]
        # the text: encode the prompt as it is (a blind class stripped it; a trailing space is its
        # own token)
        + [
            Case(
                (model, tok, "The capital of France is ", 5),
                label="SmolLM2, a prompt ending in a space, k=5",
            )
        ]
        + [
            Case((lm, toy, "4 4 4 2", 6), label="toy model, '4 4 4 2', k=6"),
            Case((lm, toy, "7", 2), label="toy model, '7', k=2"),
            Case(
                (Resource("nb01_pow2_lm_bf16"), toy, "5", 4),
                label="toy model with bfloat16 logits, k=4",
            ),
            Case(
                (Resource("nb01_pow2_lm_nograd"), toy, "1 6", 3),
                label="toy model that refuses to run with gradients on, k=3",
            ),
            # the text: "on the model's device" (ids built on the CPU fail only beside a GPU:
            # top_k_next_tokens__ids_on_cpu)
            Case(
                (Resource("nb01_pow2_lm_second_device"), toy, "3 1 2", 4),
                label="toy model whose weights are on another device than the CPU, '3 1 2', k=4",
            ),
        ]
    )


def _positions_cases() -> list[Case]:
    return [
        Case((p, n), label=f"prompt {p}, {n} new tokens")
        for p, n in [
            (1, 1),
            (0, 3),
            (7, 2),
            (1000, 1000),
            (4096, 4096),
            (50, 1),
            (3, 10),
            # an odd total past 2^24: float32 cannot hold it (zoo: float32_sum)
            (4096, 4095),
        ]
    ]


CHECKS = [
    Check(
        "token_pieces_hidden",
        "token_pieces",
        _pieces_cases,
        pieces_compare,
        hint="bytes of every token, for both tokenizers and any text.",
    ),
    Check(
        "tokens_per_word_hidden",
        "tokens_per_word",
        _per_word_cases,
        allclose(rtol=1e-12, atol=0),
        contract=Contract(number=True),
        hint="tokens / words, with words = text.split().",
    ),
    Check(
        "embedding_layer_hidden",
        "run_embedding_layer",
        _embedding_cases,
        embedding_compare,
        contract=Contract(meta=True),
        hint="any batch size, T up to max_seq_len: print both terms' shapes for a batch of 3; "
        "positions 0 .. T-1 in every row.",
    ),
    Check(
        "embedding_bytes_hidden",
        "embedding_bytes",
        _memory_cases,
        same_number(diagnoses=BYTES_DIAGNOSES),
        hint="bytes_per_value may be a fraction (0.5 for 4 bits): is your result still exact, "
        "with no rounding?",
    ),
    Check(
        "causal_mask_hidden",
        "causal_mask",
        _mask_cases,
        mask_compare,
        hint="bool, True on and below the diagonal.",
    ),
    Check(
        "causal_attention_hidden",
        "causal_attention",
        _attention_cases,
        allclose(rtol=1e-5, atol=1e-6),
        contract=Contract(meta=True),
        forbidden=ATTENTION_FORBIDDEN,
        hint="scale by 1/sqrt(d), mask with -inf before the softmax over keys, keep the input's "
        "dtype.",
    ),
    Check(
        "top_k_next_tokens_hidden",
        "top_k_next_tokens",
        _topk_cases,
        topk_compare,
        hint="last position's logits, softmax over the whole vocabulary, k largest, most likely "
        "first.",
    ),
    Check(
        "positions_without_cache_hidden",
        "positions_without_cache",
        _positions_cases,
        same_number(integer=True),
        hint="count by hand: one pass per new token, over the prompt and the tokens generated "
        "before it.",
    ),
]

# Visible checks in disguise: outside the kernel their points need these too
# (autograde/hidden/_twins.py).
CHECKS += twins(
    _visible.CHECKS,
    {
        "causal_attention": {"kind": attention_features((0, 1), (2,))},
        "embedding_layer": {"kind": embedding_rows},
    },
)
