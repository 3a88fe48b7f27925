"""How close a low-bit path's next-token distributions are to fp32's, measured as llama.cpp's
perplexity tool does.

llama.cpp (`llama-perplexity --kl-divergence-base` then `--kl-divergence`) feeds a fixed text
through the full-precision model and the quantized one, teacher-forced (the text's own tokens, never
the model's), in chunks of n_ctx = 512 tokens, and scores only each chunk's second half, so that
every scored prediction sees at least 256 tokens of context. Per scored position it compares the two
distributions over the vocabulary and reports, among others:
- "Mean KLD": mean over positions of KL(P_base || P_quant) = sum_v p(v) (ln p(v) - ln q(v)), base =
reference;
- "99.0% KLD", "Maximum KLD": the tail of that per-position KLD;
- "Same top p": the share of positions where both argmaxes are the same token (top-1 agreement);
- "Mean PPL(Q)/PPL(base)" and "Mean ln(PPL(Q)/PPL(base))": the perplexity of the text under each
model.

Here the chunks overlap by half (windows of `ctx` tokens advancing by `ctx // 2`), each scored on
its second half: every scored prediction still sees between ctx/2 and ctx - 1 tokens of context, as
in llama.cpp, but every token from position ctx/2 to the end of the text is scored once, so a
2,300-token text gives ~2,000 scored positions instead of ~1,000. No BOS is inserted (SmolLM2's file
adds none). The tail that fills no whole window is dropped, as llama.cpp drops a partial chunk.

This lives in benchmarks/, not course_lib: it computes a perplexity, which notebook 02 asks students
to write.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

# the fixed text (written for this project)
TEXT = Path(__file__).resolve().parent / "data" / "quality_text.txt"
# llama.cpp's default n_ctx for perplexity runs; SmolLM2 was trained on far longer contexts
CTX = 512
# issue 35: a path may stand in for fp32 in demonstrations below / above these
KLD_MAX, AGREEMENT_MIN = 0.01, 0.99

# ids (1, T) -> logits (1, T, V), as course_lib's Transformer
Model = Callable[[torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class Quality:
    """A candidate model's next-token distributions against a reference's, over the scored positions
    of one text."""

    positions: int  # scored predictions
    mean_kld: float  # mean over positions of KL(reference || candidate), nats
    p99_kld: float  # 99th percentile of the per-position KLD (linear interpolation), nats
    max_kld: float
    # share of positions where both models' argmax is the same token ("Same top p")
    agreement: float
    ppl_reference: float  # exp(mean negative log-likelihood of the text's next tokens)
    ppl: float

    @property
    def ppl_ratio(self) -> float:
        """PPL(candidate) / PPL(reference); 1.0 means no loss."""
        return self.ppl / self.ppl_reference

    @property
    def ln_ppl_ratio(self) -> float:
        """ln(PPL(candidate) / PPL(reference)) = mean NLL(candidate) - mean NLL(reference), nats."""
        return math.log(self.ppl) - math.log(self.ppl_reference)

    def qualifies(self) -> bool:
        """Issue 35's bar for demonstrations: agreement >= 99 % and mean KLD <= 0.01."""
        return self.agreement >= AGREEMENT_MIN and self.mean_kld <= KLD_MAX


def windows(n_tokens: int, ctx: int) -> list[tuple[int, int]]:
    """(start, first scored logit) of each window: windows of ctx tokens every ctx // 2; logit j
    predicts token start + j + 1, and j runs over [ctx // 2 - 1, ctx - 1), so targets ctx/2 .. n-1
    are each scored once."""
    if ctx < 2 or ctx % 2:
        raise ValueError(f"ctx must be even and >= 2, got {ctx}")
    if n_tokens < ctx:
        raise ValueError(f"the text has {n_tokens} tokens, fewer than one window of {ctx}")
    half = ctx // 2
    return [(start, half - 1) for start in range(0, n_tokens - ctx + 1, half)]


def position_stats(
    ref_logits: torch.Tensor, cand_logits: torch.Tensor, targets: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per position (N, V) logits -> (KL(ref || cand), argmaxes equal, NLL under ref, NLL under
    cand), in float64."""
    log_p = torch.log_softmax(ref_logits.double(), dim=-1)  # (N, V) reference
    log_q = torch.log_softmax(cand_logits.double(), dim=-1)  # (N, V) candidate
    kld = (log_p.exp() * (log_p - log_q)).sum(-1)  # (N,)
    # (N,)  ties: torch picks the first maximum in both
    same = ref_logits.argmax(-1) == cand_logits.argmax(-1)
    rows = torch.arange(len(targets))
    return kld, same, -log_p[rows, targets], -log_q[rows, targets]


def compare(
    reference: Model,
    candidates: Mapping[str, Model],
    ids: Sequence[int],
    ctx: int = CTX,
    max_windows: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Quality]:
    """Each candidate's Quality against `reference`, teacher-forced over `ids` in half-overlapping
    windows of ctx."""
    spans = windows(len(ids), ctx)[:max_windows]
    ids_t = torch.as_tensor(list(ids), dtype=torch.long)
    stats: dict[str, list[tuple[torch.Tensor, ...]]] = {name: [] for name in candidates}
    for i, (start, first) in enumerate(spans):
        x = ids_t[start : start + ctx][None]  # (1, ctx)
        targets = ids_t[
            start + first + 1 : start + ctx
        ]  # (n,) the tokens the scored logits predict
        with torch.no_grad():
            ref = reference(x)[0, first : ctx - 1]  # (n, V)
            for name, model in candidates.items():
                stats[name].append(position_stats(ref, model(x)[0, first : ctx - 1], targets))
        if progress is not None:
            progress(i + 1, len(spans))
    return {name: _summarize(parts) for name, parts in stats.items()}


def _summarize(parts: list[tuple[torch.Tensor, ...]]) -> Quality:
    kld, same, nll_ref, nll = (torch.cat(column) for column in zip(*parts))
    return Quality(
        positions=len(kld),
        mean_kld=kld.mean().item(),
        p99_kld=torch.quantile(kld, 0.99).item(),
        max_kld=kld.max().item(),
        agreement=same.double().mean().item(),
        ppl_reference=nll_ref.mean().exp().item(),
        ppl=nll.mean().exp().item(),
    )


def text_ids(tok) -> list[int]:
    """The fixed text's token ids under `tok` (a course_lib ModelTokenizer)."""
    return tok.encode(TEXT.read_text(encoding="utf-8"))
