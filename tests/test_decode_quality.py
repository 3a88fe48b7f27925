"""benchmarks/quality.py: llama.cpp-style quality of a low-bit path (mean KLD to the reference,
top-1 agreement, perplexity ratio), checked against values worked out by hand with math.log and
against a plain-Python computation on generated tables.

Truths used: the definitions llama.cpp's perplexity tool reports (KL(P_base || P_quant) = sum p ln(p
/ q) per position, "Same top p" = share of positions whose argmaxes agree, PPL = exp(mean NLL)); a
model compared with itself on the CPU gives bit-identical logits. Toy models are bigram tables
(logits depend on the current token only), so each scored position's distributions are rows of a
table the test writes. No real model: < 5 s.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.quality import compare, windows
from course_lib.model import ModelConfig, Transformer


class Table(torch.nn.Module):
    """A bigram model: the logits after token t are row t of a fixed table."""

    def __init__(self, rows: list[list[float]]):
        super().__init__()
        self.table = torch.tensor(rows, dtype=torch.float32)  # (V, V)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        return self.table[idx]  # (B, T, V)


def log_rows(probs: list[list[float]]) -> list[list[float]]:
    """Logits whose softmax is exactly these probabilities (each row sums to 1)."""
    return [[math.log(p) for p in row] for row in probs]


def test_a_model_compared_with_itself_has_zero_divergence_full_agreement_and_ratio_one():
    """A random tiny Transformer against itself: KLD exactly 0, agreement exactly 1, PPL ratio
    exactly 1."""
    torch.manual_seed(0)
    model = Transformer(ModelConfig.tiny()).eval()
    ids = torch.randint(0, 256, (40,)).tolist()
    q = compare(model, {"self": model}, ids, ctx=16)["self"]
    assert q.positions == 32  # windows start at 0, 8, 16, 24; targets 8 .. 39
    assert (q.mean_kld, q.p99_kld, q.max_kld, q.agreement, q.ppl_ratio) == (0.0, 0.0, 0.0, 1.0, 1.0)
    assert q.ppl == q.ppl_reference and q.qualifies()


# P is the reference, Q the candidate; rows are the next-token distributions after tokens 0, 1, 2.
P = [[0.9, 0.05, 0.05], [0.2, 0.5, 0.3], [0.25, 0.25, 0.5]]
Q = [[0.3, 0.4, 0.3], [0.2, 0.5, 0.3], [0.5, 0.25, 0.25]]
# ctx = 4: windows start at 0, 2, 4; each scores logits 1 and 2, i.e. targets 2, 3 | 4, 5 | 6, 7.
IDS = [0, 1, 0, 0, 1, 2, 0, 1]
# Scored (previous token, target): (1, 0) (0, 0) | (0, 1) (1, 2) | (2, 0) (0, 1): previous token 0
# three times, 1 twice, 2 once.


def test_kld_agreement_and_perplexity_equal_the_values_worked_out_by_hand():
    """Mean KL(P || Q), agreement and both perplexities on a 3-token table model, computed by
    hand."""
    # after token 0
    kl0 = 0.9 * math.log(0.9 / 0.3) + 0.05 * math.log(0.05 / 0.4) + 0.05 * math.log(0.05 / 0.3)
    kl1 = 0.0  # after token 1: same row
    # = ln(2) / 4
    kl2 = 0.25 * math.log(0.25 / 0.5) + 0.25 * math.log(0.25 / 0.25) + 0.5 * math.log(0.5 / 0.25)
    mean_kld = (3 * kl0 + 2 * kl1 + 1 * kl2) / 6
    # argmax P vs Q: after 0: 0 vs 1 (differ); after 1: 1 vs 1 (agree); after 2: 2 vs 0 (differ) ->
    # 2 of 6 agree.
    agreement = 2 / 6
    nll_p = (
        -(
            math.log(0.2)
            + math.log(0.9)
            + math.log(0.05)
            + math.log(0.3)
            + math.log(0.25)
            + math.log(0.05)
        )
        / 6
    )
    nll_q = (
        -(
            math.log(0.2)
            + math.log(0.3)
            + math.log(0.4)
            + math.log(0.3)
            + math.log(0.5)
            + math.log(0.4)
        )
        / 6
    )

    q = compare(Table(log_rows(P)), {"q": Table(log_rows(Q))}, IDS, ctx=4)["q"]
    assert q.positions == 6
    assert q.mean_kld == pytest.approx(mean_kld, rel=1e-6)
    assert q.max_kld == pytest.approx(kl0, rel=1e-6)
    # sorted (0, 0, kl2, kl0, kl0, kl0): 99 % falls at index 4.95
    assert q.p99_kld == pytest.approx(kl0, rel=1e-6)
    assert q.agreement == agreement
    assert q.ppl_reference == pytest.approx(math.exp(nll_p), rel=1e-6)
    assert q.ppl == pytest.approx(math.exp(nll_q), rel=1e-6)
    assert q.ppl_ratio == pytest.approx(math.exp(nll_q - nll_p), rel=1e-6)
    assert q.ln_ppl_ratio == pytest.approx(nll_q - nll_p, rel=1e-6)
    assert not q.qualifies()


def test_the_reference_is_p_in_kl_p_q():
    """KL is asymmetric: with P as reference it is sum p ln(p/q); swapping the models gives sum q
    ln(q/p)."""
    p, q = [[0.9, 0.05, 0.05]] * 3, [[1 / 3, 1 / 3, 1 / 3]] * 3
    kl_pq = 0.9 * math.log(0.9 * 3) + 2 * 0.05 * math.log(0.05 * 3)
    kl_qp = (1 / 3) * math.log((1 / 3) / 0.9) + 2 * (1 / 3) * math.log((1 / 3) / 0.05)
    assert abs(kl_pq - kl_qp) > 0.2  # 0.70 vs 0.93 nats: the direction is visible
    ids = [0, 0, 0, 0]
    forward = compare(Table(log_rows(p)), {"q": Table(log_rows(q))}, ids, ctx=2)["q"]
    backward = compare(Table(log_rows(q)), {"p": Table(log_rows(p))}, ids, ctx=2)["p"]
    assert forward.positions == 3
    assert forward.mean_kld == pytest.approx(kl_pq, rel=1e-6)
    assert backward.mean_kld == pytest.approx(kl_qp, rel=1e-6)


@st.composite
def two_tables_and_ids(draw):
    v = draw(st.integers(2, 5))
    logit = st.floats(-6, 6, allow_nan=False, width=32)
    tables = [[[draw(logit) for _ in range(v)] for _ in range(v)] for _ in range(2)]
    ids = draw(st.lists(st.integers(0, v - 1), min_size=4, max_size=14))
    return tables, ids


@settings(max_examples=60, deadline=None, derandomize=True)
@given(two_tables_and_ids())
def test_generated_tables_match_a_plain_python_computation(case):
    """Mean KLD >= 0 and equal to sum p ln(p/q) over the scored targets (ctx/2 .. end of the last
    whole window), computed here with math.exp / math.log; agreement in [0, 1] and equal to the
    counted argmax matches."""
    (ref_rows, cand_rows), ids = case
    ctx, half = 4, 2
    q = compare(Table(ref_rows), {"c": Table(cand_rows)}, ids, ctx=ctx)["c"]

    def probs(row):
        top = max(row)
        e = [math.exp(x - top) for x in row]
        return [x / sum(e) for x in e]

    end = ctx + (len(ids) - ctx) // half * half  # one past the last target of the last whole window
    klds, same = [], 0
    for t in range(half, end):
        p, c = probs(ref_rows[ids[t - 1]]), probs(cand_rows[ids[t - 1]])
        klds.append(sum(pi * (math.log(pi) - math.log(ci)) for pi, ci in zip(p, c) if pi > 0))
        # argmax with ties to the first maximum (torch.argmax's rule), on the float32 logits the
        # models return
        r32, c32 = torch.tensor(ref_rows[ids[t - 1]]), torch.tensor(cand_rows[ids[t - 1]])
        same += r32.tolist().index(max(r32.tolist())) == c32.tolist().index(max(c32.tolist()))
    assert q.positions == len(klds)
    assert q.mean_kld >= -1e-12 and min(klds) >= -1e-12
    assert q.mean_kld == pytest.approx(sum(klds) / len(klds), rel=1e-6, abs=1e-9)
    assert 0.0 <= q.agreement <= 1.0 and q.agreement == pytest.approx(same / len(klds))


def test_windows_refuse_texts_shorter_than_one_window_and_odd_contexts():
    """Too short a text or an odd ctx is refused by name, not scored on a partial window."""
    assert windows(8, 4) == [(0, 1), (2, 1), (4, 1)]
    with pytest.raises(ValueError, match="fewer than one window"):
        windows(3, 4)
    with pytest.raises(ValueError, match="even"):
        windows(10, 5)
