"""Issue 38: every graded exercise's written domain (``autograde.domains.DOMAINS``, one table per
course_lib/checks module) and the table of the properties its text states, each with the case that
checks it.

- every exercise a check grades has a domain entry (args, returns, the text's own edge cases, stated
properties);
- every quoted edge case is in the student notebook, verbatim up to whitespace (a quote cannot drift
from the text);
- every property names a case that exists in the named check (a label substring), or an engine
guarantee the
  check's contract turns on ("contract no_mutation", "contract generator", ...): the table cannot
  drift from the checks;
- the issue's new edge cases, their expected values computed a second way here (closed forms, torch
in float64,
  the bytes of the text) and compared with what the checks use (a case's own expected value or the
  reference solution's output stored by `python -m autograde release`).

Cost: ~20 s (building every case of every check once, the real-size ones included).
"""

from __future__ import annotations

import importlib
import json
import math
import re
from functools import lru_cache
from pathlib import Path

import pytest
import torch

from course_lib.checks.engine import Case, Generator

ROOT = Path(__file__).resolve().parents[2]
MODULES = {
    "01_pipeline_trace": "pipeline_trace",
    "02_logits_softmax": "logits_softmax",
    "03_sampling": "sampling",
    "04_generation_loop": "generation_loop",
    "05_debugging_generation": "debugging_generation",
}


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


@lru_cache(maxsize=None)
def _notebook_text(assignment: str) -> str:
    nb = json.loads((ROOT / "notebooks" / assignment / f"{assignment}.ipynb").read_text())
    return _norm("\n".join("".join(c["source"]) for c in nb["cells"]))


@lru_cache(maxsize=None)
def _checks(module: str) -> dict:
    vis = importlib.import_module(f"course_lib.checks.{module}")
    hid = importlib.import_module(f"autograde.hidden.{module}")
    return {c.name: c for c in list(vis.CHECKS) + list(hid.CHECKS)}


@lru_cache(maxsize=None)
def _labels(module: str, check: str) -> tuple[str, ...]:
    return tuple(c.label for c in _checks(module)[check].cases())


def _long_ids(chk) -> bool:
    """The check's comparator refuses int32 ids and accepts long ones (the text: "dtype
    `torch.long`")."""
    p = torch.tensor([0.5, 0.5])
    case = Case((p, Generator(0)), label="probe")
    return (
        chk.compare(p, torch.tensor(0, dtype=torch.int32), case) is not None
        and chk.compare(p, torch.tensor(0, dtype=torch.long), case) is None
    )


CONTRACT = {
    "no_mutation": lambda chk: not chk.allow_mutation and chk.contract.new_output,
    "generator": lambda chk: chk.contract.generator,
    "number": lambda chk: chk.contract.number,
    "any_float": lambda chk: chk.contract.any_float,
    "long ids": _long_ids,
}


def _domain(module: str) -> dict:
    from autograde.domains import DOMAINS

    return DOMAINS[module]


@pytest.mark.parametrize("assignment", sorted(MODULES))
def test_every_exercise_has_a_domain(assignment):
    module = MODULES[assignment]
    domain = _domain(module)
    graded = {c.exercise for c in _checks(module).values()}
    assert graded <= set(domain), f"no domain for {sorted(graded - set(domain))}"
    assert set(domain) <= graded, (
        f"domain for exercises no check grades: {sorted(set(domain) - graded)}"
    )
    for ex, d in domain.items():
        assert d["args"] and d["returns"] and d["text"] and d["properties"], ex
        assert any("determinism" in p for p in d["properties"]), f"{ex}: determinism has no case"


@pytest.mark.parametrize("assignment", sorted(MODULES))
def test_quotes_are_the_notebooks_words(assignment):
    text = _notebook_text(assignment)
    missing = [
        (ex, q)
        for ex, d in _domain(MODULES[assignment]).items()
        for q in d["text"]
        if _norm(q) not in text
    ]
    assert not missing, missing


@pytest.mark.parametrize("assignment", sorted(MODULES))
def test_every_stated_property_has_its_case(assignment):
    module = MODULES[assignment]
    checks = _checks(module)
    bad = []
    for ex, d in _domain(module).items():
        for prop, where in d["properties"].items():
            name, _, what = where.partition(": ")
            chk = checks.get(name)
            if chk is None or chk.exercise != ex:
                bad.append((ex, prop, f"no check {name!r} of {ex}"))
            elif what.startswith("contract "):
                if not CONTRACT[what.removeprefix("contract ")](chk):
                    bad.append((ex, prop, f"{name}'s contract does not give {what}"))
            elif not any(what in label for label in _labels(module, name)):
                bad.append((ex, prop, f"no case of {name} labelled with {what!r}"))
    assert not bad, bad


# ------------------------------------------------------------------ the new edge cases, computed a
# second way
def _stored(check: str) -> list:
    from autograde.course import Course

    return Course().hidden_registry().expected_values(check)


def _case(module: str, check: str, part: str) -> tuple[int, Case]:
    cases = _checks(module)[check].cases()
    hits = [
        (i, c) for i, c in enumerate(cases) if part in c.label and "[called twice]" not in c.label
    ]
    assert len(hits) == 1, (check, part, [c.label for _, c in hits])
    return hits[0]


def test_leak_case_distribution_by_hand():
    """top_k=3, top_p=0.8, min_p=0.3 on [3, 2, 1, 0, ...]: written out in float64, not with the
    course's filters."""
    from autograde.hidden import sampling as H

    z = torch.tensor(H.LEAK_LOGITS, dtype=torch.float64)
    # top-k = 3: the three largest, renormalised
    top3 = torch.softmax(z[:3], -1)
    before = torch.cumsum(top3, 0) - top3  # mass before each
    kept = [i for i in range(3) if before[i] < 0.8]  # top-p
    p = torch.softmax(z[kept], -1)
    kept = [i for i, q in zip(kept, p) if q >= 0.3 * p.max()]
    want = torch.zeros(8, dtype=torch.float64)
    want[kept] = torch.softmax(z[kept], -1)
    _, case = _case("sampling", "sample_next_hidden", "(7e5 draws)")
    assert kept == [0, 1]
    assert torch.allclose(case.expected, want, rtol=1e-12, atol=0)
    assert (
        len(case.args[0]) * case.repeat >= 7e5
        and (1 - 1e-5) ** (len(case.args[0]) * case.repeat) < 1e-3
    )


def test_leak_comparator_sees_one_removed_draw_and_passes_a_correct_sampler():
    from course_lib.checks.sampling import sampler_leak

    p = torch.tensor([0.75, 0.25, 0.0], dtype=torch.float64)
    case = Case((torch.zeros(1000, 3), Generator(0)), label="probe", repeat=2)
    g = torch.Generator().manual_seed(0)
    draws = [
        torch.multinomial(p.float().expand(1000, 3), 1, generator=g).squeeze(-1) for _ in range(2)
    ]
    assert sampler_leak(1e-6)(p, draws, case) is None
    draws[1][500] = 2  # one removed token in 2000 draws
    assert "probability 0" in sampler_leak(1e-6)(p, draws, case)


@pytest.mark.parametrize("check", ["top_p_filter_hidden", "min_p_filter_hidden"])
def test_all_negative_row_keeps_two(check):
    """[-1e4, -1e4 - 1, -1e4 - 3, -1e4 - 40]: probabilities .705 .259 .035 0 in float64; both rules
    keep ids 0, 1."""
    i, case = _case("sampling", check, "all near -1e4")
    x = case.args[0].double()
    probs = torch.softmax(x - x.max(), -1)[0]
    assert abs(float(probs[0]) - 1 / (1 + math.exp(-1) + math.exp(-3) + math.exp(-40))) < 1e-12
    got = _stored(check)[i]
    assert torch.isfinite(got[0]).tolist() == [True, True, False, False]
    assert torch.equal(got[0, :2], case.args[0][0, :2])


def test_many_repeats_in_bfloat16_by_hand():
    from autograde.hidden.debugging_generation import PF_REPEATS

    i, case = _case(
        "debugging_generation",
        "presence_frequency_penalty_hidden",
        "tokens repeated 257 to 300 times",
    )
    z, hist = case.args
    counts = torch.bincount(hist[0], minlength=8)
    assert counts.tolist() == PF_REPEATS and max(PF_REPEATS) > 256
    # float32, rounded once
    want = (z.float() - case.kwargs["frequency"] * counts.float()).bfloat16()
    assert torch.equal(_stored("presence_frequency_penalty_hidden")[i], want)
    wrong = (z.float() - case.kwargs["frequency"] * counts.bfloat16().float()).bfloat16()
    # the case tells counts kept in bfloat16 apart
    assert int((wrong != want).sum()) >= 2


@pytest.mark.parametrize("part", ["cafe\u0301", "\ufb01ne", "' hello world\\n'"])
def test_normal_form_pieces_join_to_the_text(part):
    """The text's own identity: the pieces join to text.encode('utf-8'), for a text in any normal
    form."""
    idx = [
        i
        for i, c in enumerate(_checks("pipeline_trace")["token_pieces_hidden"].cases())
        if part in c.label and "[called twice]" not in c.label
    ]
    assert len(idx) == 2  # cl100k_base and SmolLM2
    cases = _checks("pipeline_trace")["token_pieces_hidden"].cases()
    stored = _stored("token_pieces_hidden")
    for i in idx:
        text = cases[i].args[1]
        assert b"".join(stored[i]) == text.encode("utf-8")
    import unicodedata

    text = cases[idx[0]].args[1]
    changed = any(unicodedata.normalize(f, text) != text for f in ("NFC", "NFKC"))
    # the normal-form texts are not in NFC / NFKC
    assert changed == (part != "' hello world\\n'")


def test_stop_inside_a_token_by_hand():
    """The stop is completed by new token 4, whose text goes on one letter past it: the row stops
    there."""
    from course_lib.checks import toy_inputs

    pair = toy_inputs._pair_tokenizer()
    for r in (0, 1):
        i, case = _case(
            "generation_loop", "generate_loop_hidden", f"completed inside new token 4 of row {r}"
        )
        stop = case.kwargs["stop_sequences"][0]
        got = _stored("generate_loop_hidden")[i][r]
        text = pair.decode(got["tokens"])
        assert got["finish_reason"] == "stop" and len(got["tokens"]) == 4
        assert (
            stop in text and not text.endswith(stop) and stop not in pair.decode(got["tokens"][:3])
        )


def _beam_by_hand(
    table: torch.Tensor, prompt: list[int], width: int, n: int, eos: int, alpha: float
):
    """Beam search over a bigram log-prob table, written again: hypotheses (tokens, sum log p);
    finished ones keep their slots; the best by sum / len^alpha."""
    beams, done = [([], 0.0)], []
    for _ in range(n):
        cand = []
        for toks, s in beams:
            last = (prompt + toks)[-1]
            cand += [(toks + [t], s + float(table[last, t])) for t in range(table.shape[1])]
        cand.sort(key=lambda c: -c[1])
        beams = []
        for toks, s in cand[:width]:
            (done if toks[-1] == eos else beams).append((toks, s))
        if not beams:
            break
    pool = done + beams
    score = lambda c: c[1] / max(len(c[0]), 1) ** alpha  # noqa: E731
    best = max(pool, key=score)
    toks = best[0][:-1] if best[0] and best[0][-1] == eos else best[0]
    return toks, score(best)


@pytest.mark.parametrize("width", [6, 9])
def test_beam_wider_than_the_vocabulary(width):
    i, case = _case(
        "generation_loop", "beam_search_hidden", f"width {width} on a 6-token vocabulary"
    )
    toks, score = _stored("beam_search_hidden")[i]
    from course_lib.checks.toy_inputs import _table

    # the text: log-softmax of the last position
    table = torch.log_softmax(_table(1).table.detach().double(), -1)
    want = _beam_by_hand(table, case.args[1], width, case.args[3], case.args[4], 1.0)
    assert list(toks) == want[0] and abs(score - want[1]) < 1e-6


# --------------------------------------------- a blind author's last edges: min-p's threshold, a
# second device label part -> ids kept, from exact probabilities (powers of two) or float64 exp with
# margin 1.4e-4
_MIN_P_EDGES = {
    # threshold 1/2 * 1/2 = 1/4: id 1 is on it
    "probabilities 1/2, 1/4, 1/8, 1/8 exactly": [0, 1],
    # threshold 2/17: ids 2 and 3 are on it
    "probabilities 8/17, 4/17, 2/17, 2/17, 1/17": [0, 1, 2, 3],
    # exp(-0.6875) < min_p < exp(-0.5)
    "float32 logits near 1e4": [0, 3],
}


def _min_p_forms():
    """Ways the text allows (softmax, exp of log-softmax, a ratio; float32 or float64; HF's
    MinPLogitsWarper) and the two it rules out (bug zoo:
    `min_p_filter__logit_form_rounded_threshold`, `min_p_filter__strict_except_top`): the keep mask
    of each."""
    from transformers.generation.logits_process import MinPLogitsWarper

    def probs_form(probs, ratio=False):
        def keep(x, mp):
            p = probs(x)
            pm = p.amax(-1, keepdim=True)
            return p / pm >= mp if ratio else p >= mp * pm

        return keep

    honest = {
        f"{name} {dt}": probs_form(lambda x, f=f, dt=dt: f(x.to(dt)), ratio)
        for name, f, ratio in [
            ("softmax", lambda z: torch.softmax(z, -1), False),
            ("exp(log_softmax)", lambda z: torch.log_softmax(z, -1).exp(), False),
            ("ratio", lambda z: torch.softmax(z, -1), True),
        ]
        for dt in (torch.float32, torch.float64)
    }
    honest["HF MinPLogitsWarper"] = lambda x, mp: torch.isfinite(
        MinPLogitsWarper(mp)(None, x.clone())
    )
    wrong = {
        "strict >": lambda x, mp: (lambda p: p > mp * p.amax(-1, keepdim=True))(
            torch.softmax(x.float(), -1)
        ),
        "logit form in float32": lambda x, mp: (
            x.float() >= x.float().amax(-1, keepdim=True) + math.log(mp)
        ),
    }
    return honest, wrong


def test_min_p_at_its_threshold_by_hand():
    honest, wrong = _min_p_forms()
    caught = set()
    for part, kept in _MIN_P_EDGES.items():
        i, case = _case("sampling", "min_p_filter_hidden", part)
        x, mp = case.args
        got = _stored("min_p_filter_hidden")[i]
        assert torch.isfinite(got[0]).nonzero().flatten().tolist() == kept, part
        # kept logits untouched
        assert torch.equal(got[torch.isfinite(got)], x[torch.isfinite(got)])
        for name, keep in honest.items():
            assert keep(x, mp)[0].nonzero().flatten().tolist() == kept, (part, name)
        caught |= {
            name
            for name, keep in wrong.items()
            if keep(x, mp)[0].nonzero().flatten().tolist() != kept
        }
    # each ruled-out form loses at least one case
    assert caught == set(wrong)


def test_model_on_a_second_device_by_hand():
    """Exact answers of the toy models (2^(7-j)/255 after token 2; 3/4 for the next id, else 1/28),
    and the model refusing ids made on the CPU as a GPU model does, memoised by selfcheck or not."""
    from autograde.exercises import memoized_models
    from course_lib.checks.engine import _RESOURCE_CACHE, Resource, _resolve

    i, _ = _case("pipeline_trace", "top_k_next_tokens_hidden", "weights are on another device")
    want = [((2 + j) % 8, 2.0 ** (7 - j) / 255) for j in range(4)]
    got = _stored("top_k_next_tokens_hidden")[i]
    assert [t for t, _ in got] == [t for t, _ in want]
    assert all(abs(p - q) < 1e-6 for (_, p), (_, q) in zip(got, want))
    i, _ = _case("logits_softmax", "sequence_logprob_hidden", "weights are on another device")
    assert (
        abs(_stored("sequence_logprob_hidden")[i] - (2 * math.log(3 / 4) + math.log(1 / 28))) < 1e-5
    )

    for name in ("nb01_pow2_lm_second_device", "nb02_next_id_lm_second_device"):
        # loaded first, as selfcheck finds it
        _resolve(Resource(name), {})
        with memoized_models():
            model = _resolve(Resource(name), {})
            device = next(model.parameters()).device
            assert device.type != "cpu"
            ids = torch.tensor([[3, 1, 2]])
            with torch.no_grad():
                logits = model(ids.to(device))
            assert logits.device == device and logits.shape == (1, 3, 8)
            with pytest.raises(RuntimeError, match="same device"):
                model(ids)  # the same ids, made on the CPU
        _RESOURCE_CACHE.pop(name, None)
