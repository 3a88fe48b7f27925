"""Twins of visible checks (autograde/hidden/_twins.py): the published cases in disguise, judged
outside the kernel.

Guarantee: a visible check's points need an answer whose results follow from its inputs. A red team
looked up the published visible cases and computed something cruder elsewhere (the overflowing
softmax, log of it, p·log p with NaN at 0; a period-1-only find_cycle): those crude formulas pass
over half of the hidden cases, so the memorised guard (tests/test_memorised.py) let the looked-up
visible points stand (5/26 on 02, 2/24 on 05). A twin repeats each visible case with the vocabulary
permuted (or the ids renamed), which changes a correct answer only by that renaming;
`autograde.verify` fails the visible check when its twin fails. The disguise keeps each case's point
(ties, -inf entries, extremes, shapes, dtypes), proven here as exact inverses, and every honest
answer we have (the references, 129 correct alternatives, in `selfcheck`) passes the twins.
"""

from __future__ import annotations

import pytest
import torch

from autograde.course import Course
from autograde.hidden._twins import SUFFIX
from course_lib.checks.engine import Case, evaluate

IDS = {"find_cycle", "repetition_rate", "distinct_n", "ends_in_loop"}
# see _twins
OWN_DISGUISE = {"causal_attention", "embedding_layer", "attend_with_cache", "generate_loop"}
# extend=True (pad for 2)
EXTENDED = {
    "ban_repeated_ngrams",
    "presence_frequency_penalty",
    "repetition_penalty",
    "penalize_repeats",
}  # (03: extend only)
GROWN = {
    "softmax": "copy",
    "log_softmax": "copy",
    "probs_at_temperature": "copy",
    "entropy": "split",
    "apply_temperature": "copy",
    "greedy": "copy",
    "top_k_filter": "copy",
    "top_p_filter": "zeros",
    "min_p_filter": "zeros",
}


def _twins():
    reg = Course().hidden_registry()
    return [(c, m) for c, m in reg.all() if c.name.endswith(SUFFIX)]


def _tensors(x):
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _tensors(v)]
    if isinstance(x, dict):
        return [t for v in x.values() for t in _tensors(v)]
    return []


def _written(visible_check, skip_raises=True):
    cases = getattr(visible_check.cases, "__wrapped_cases__", visible_check.cases)()
    return [c for c in cases if not (skip_raises and c.raises is not None)]


def test_every_graded_exercise_of_02_03_05_on_tensors_or_ids_has_a_twin():
    names = {c.name.removesuffix(SUFFIX) for c, _ in _twins()}
    assert {
        "softmax",
        "log_softmax",
        "entropy",
        "probs_at_temperature",
        "top_k_filter",
        "top_p_filter",
        "min_p_filter",
        "sample",
        "sample_next",
        "find_cycle",
        "repetition_rate",
        "repetition_penalty",
        "ban_repeated_ngrams",
        "presence_frequency_penalty",
        "distinct_n",
        "ends_in_loop",
        "greedy",
        "apply_temperature",
        "penalize_repeats",
        "process_logits",
    } | OWN_DISGUISE <= names


@pytest.mark.parametrize("name", sorted(c.name for c, _ in _twins()))
def test_a_twin_case_is_its_visible_case_renamed_and_nothing_else(name):
    """Exact disguise: the vocabulary axis of every float tensor holds the same values in another
    order, shapes, dtypes and -inf entries kept; ids are renamed one-to-one (same equality pattern);
    no twin equals its case."""
    course = Course()
    twin = course.hidden_registry().get(name)
    visible = course.visible_registry().get(name.removesuffix(SUFFIX))
    originals = {c.label + " [twin]": c for c in _written(visible)}
    cases = twin.cases()
    assert len(cases) >= max(1, (len(originals) + 1) // 2), "the disguise dropped most cases"
    changed = 0
    for case in cases:
        orig = originals[case.label]
        if name.removesuffix(SUFFIX) in EXTENDED:
            changed += _is_extended_renaming(orig, case)
            continue
        if name.removesuffix(SUFFIX) in GROWN:
            changed += _is_grown_vocabulary(orig, case, GROWN[name.removesuffix(SUFFIX)])
            continue
        # an id sequence may come as a 1-D tensor: compare it as a list
        if name.removesuffix(SUFFIX) in IDS:
            listed = (
                lambda c: Case(
                    (
                        c.args[0].tolist() if isinstance(c.args[0], torch.Tensor) else c.args[0],  # noqa: E731
                        *c.args[1:],
                    ),
                    c.kwargs,
                    c.label,
                )
            )
            orig, case = listed(orig), listed(case)
        a, b = _tensors((orig.args, orig.kwargs)), _tensors((case.args, case.kwargs))
        assert [(t.shape, t.dtype) for t in a] == [(t.shape, t.dtype) for t in b]
        for x, y in zip(a, b):
            if x.is_floating_point() and x.dim():
                # the same values (a multiset), and for a vocabulary twin the same values in every
                # row
                assert torch.equal(
                    torch.nan_to_num(x.reshape(-1).sort().values),
                    torch.nan_to_num(y.reshape(-1).sort().values),
                )
                if name.removesuffix(SUFFIX) not in OWN_DISGUISE:
                    assert torch.equal(
                        torch.nan_to_num(x.sort(-1).values), torch.nan_to_num(y.sort(-1).values)
                    )
            changed += not torch.equal(x, y)
        if not a:  # ids in lists: the same pattern of equal and unequal positions
            at = 1 if name == "generate_loop" + SUFFIX else 0  # generate_loop(model, prompts, ...)
            flat = lambda v: [
                i for s in v for i in (flat(s) if isinstance(s, (list, tuple)) else [s])
            ]  # noqa: E731
            ids = lambda c: (
                flat(c.args[at])
                + flat(list(c.kwargs.get("stop_sequences", [])))
                + [c.kwargs.get("eos_id", -1)]
            )  # noqa: E731
            x, y = ids(orig), ids(case)
            if at == 0:  # each sequence is led by a few ids it never uses: compare its end
                seqs = lambda v: [v] if not v or not isinstance(v[0], (list, tuple)) else list(v)  # noqa: E731
                lead = [
                    len(b) - len(a)
                    for a, b in zip(seqs(list(orig.args[0])), seqs(list(case.args[0])))
                ]
                assert lead and all(1 <= k <= 4 for k in lead) and len(set(lead)) == 1, lead
                rest = flat([list(s)[lead[0] :] for s in seqs(list(case.args[0]))])
                # ids the sequence never uses
                assert not set(list(seqs(list(case.args[0]))[0])[: lead[0]]) & set(rest)
                y = rest + [case.kwargs.get("eos_id", -1)]
                x = x[: len(y) - 1] + [x[-1]]
            assert len(x) == len(y) and [[i == j for j in x] for i in x] == [
                [i == j for j in y] for i in y
            ]
            assert orig.args[:at] + orig.args[at + 1 :] == case.args[:at] + case.args[at + 1 :]
            assert set(orig.kwargs) == set(case.kwargs)
            changed += x != y
    assert changed >= len(cases) // 2, "most twins equal their visible case: no disguise"


def _pattern(seq: list) -> list[list[bool]]:
    return [[i == j for j in seq] for i in seq]


def _splits(orig: list, twin: list):
    """Every way to read the twin sequence as a lead (k in 1..4 ids) and a filler (P ids after
    position q of the body) around a body with the original's pattern of equal and unequal ids, the
    cut ids distinct and absent from the body: yields (body, (k, q, P)). Distinct ids make several
    readings possible; callers pick by values."""
    d = len(twin) - len(orig)
    for k in range(1, 5):
        n_pad = d - k
        if n_pad < 0 or (n_pad and not orig):
            continue
        for q in range(1, max(2, len(orig))) if n_pad else [len(orig)]:
            body = twin[k : k + q] + twin[k + q + n_pad :]
            cut = twin[:k] + twin[k + q : k + q + n_pad]
            if (
                len(set(cut)) == len(cut)
                and not set(cut) & set(body)
                and len(body) == len(orig)
                and _pattern(body) == _pattern(orig)
            ):
                yield body, (k, q, n_pad)


def _columns(x: torch.Tensor) -> list[tuple]:
    """Each vocabulary column of x (all leading axes flattened) as a hashable tuple."""
    flat = torch.nan_to_num(
        x.detach().double().reshape(-1, x.shape[-1]), posinf=1e308, neginf=-1e308
    )
    return [tuple(flat[:, j].tolist()) for j in range(x.shape[-1])]


def _is_grown_vocabulary(orig: Case, case: Case, how: str) -> bool:
    """A grown vocabulary twin without a history, inverted as multisets of columns (the renaming
    permutes them): ``copy``: the original columns plus 1-4 copies of some of them; ``split``: 1-4
    original columns replaced by their halves, each half twice (halving is exact, so a distribution
    still sums to what it did)."""
    from collections import Counter

    (xo, *rest_o), (xt, *rest_t) = orig.args, case.args
    assert rest_o == rest_t and xo.dtype == xt.dtype and set(orig.kwargs) == set(case.kwargs)
    # an id history (process_logits's previous_ids) is led by unused ids
    for key, a in orig.kwargs.items():
        b = case.kwargs[key]
        if isinstance(a, torch.Tensor):
            k = b.shape[-1] - a.shape[-1]
            a, b = a.reshape(-1, a.shape[-1]).tolist(), b.reshape(-1, b.shape[-1]).tolist()
            lead = {tuple(r[:k]) for r in b}
            assert 1 <= k <= 4 and len(lead) == 1 and len(set(b[0][:k])) == k
            assert not set(b[0][:k]) & {i for r in b for i in r[k:]}
            assert _pattern([i for r in b for i in r[k:]]) == _pattern([i for r in a for i in r])
        else:
            assert a == b
    assert xo.shape[:-1] == xt.shape[:-1] and 1 <= xt.shape[-1] - xo.shape[-1] <= 4
    co, ct = Counter(_columns(xo)), Counter(_columns(xt))
    if how == "copy":
        extra = ct - co
        assert (
            not co - ct
            and sum(extra.values()) == xt.shape[-1] - xo.shape[-1]
            and all(c in co for c in extra)
        )
    # -inf columns, or finite ones so far below each row's max that softmax gives exactly 0
    elif how == "zeros":
        extra = ct - co
        assert not co - ct and sum(extra.values()) == xt.shape[-1] - xo.shape[-1]
        top = (
            xo.double()
            .masked_fill(~torch.isfinite(xo), float("-inf"))
            .amax(-1)
            .reshape(-1)
            .tolist()
        )
        for col in extra.elements():
            assert all(
                v == -1e308 or t == float("-inf") or v <= t - 1e4 * max(1.0, abs(t))
                for v, t in zip(col, top)
            )
    else:
        halves = dict(zip(_columns(xo), _columns(xo / 2)))
        # columns halved (a column equal to its half, all 0 or -inf, may be halved unseen)
        missing = co - ct
        assert sum(missing.values()) <= 4
        want = co - missing
        for col in missing.elements():
            want[halves[col]] += 2
        extra = ct - want
        assert not want - ct and all(halves[c] == c for c in extra), (
            "not the original with columns halved"
        )
        # the same total, to the rounding of a sum taken in another order
        ulp = torch.finfo(xo.dtype).eps * xt.shape[-1]
        assert torch.allclose(
            xt.double().sum(-1), xo.double().sum(-1), rtol=0, atol=ulp, equal_nan=True
        )
    return True


def _is_extended_renaming(orig: Case, case: Case) -> bool:
    """An extended vocabulary twin, inverted exactly: each history row is led by k in 1..4 ids it
    never uses and holds P fresh ids after position q of its body (``_splits``; k = P = 0 where the
    case has a window), and a renaming p of the original ids makes the logits agree, twin[..., p(i)]
    == orig[..., i] for every i, while the added columns hold copies of values of the same row.
    Returns True (it always changes the case)."""
    lo, ho, *rest_o = orig.args
    lt, ht, *rest_t = case.args
    assert rest_o == rest_t and set(orig.kwargs) == set(case.kwargs)
    listed = isinstance(ho, list)  # a history given as a Python list is renamed, not led
    if listed:
        ho, ht = torch.tensor(ho, dtype=torch.long), torch.tensor(ht, dtype=torch.long)
    assert lt.dtype == lo.dtype and lt.shape[:-1] == lo.shape[:-1] and ht.dtype == ho.dtype
    v = lo.shape[-1]
    windowed = orig.kwargs.get("window") is not None
    assert (lt.shape[-1] == v) == windowed, "a case with a window is renamed, never extended"
    assert ht.shape[:-1] == ho.shape[:-1]
    rows_o = ho.reshape(max(1, ho[..., :1].numel()), ho.shape[-1]).tolist()
    rows_t = ht.reshape(max(1, ht[..., :1].numel()), ht.shape[-1]).tolist()
    if windowed or listed:
        assert ht.shape == ho.shape
        return _renames_logits(lo, lt, rows_o, rows_t, [])
    readings = set.intersection(
        *[{split for _, split in _splits(a, b)} for a, b in zip(rows_o, rows_t)]
    )
    assert readings, "no common lead and filler explain the history"
    for k, q, n_pad in sorted(readings):
        cut = [row[:k] + row[k + q : k + q + n_pad] for row in rows_t]
        bodies = [row[k : k + q] + row[k + q + n_pad :] for row in rows_t]
        pl = orig.kwargs.get("prompt_len")
        if (
            len({tuple(c) for c in cut}) != 1
            or lt.shape[-1] - v < k + n_pad
            or (pl is not None and case.kwargs["prompt_len"] != pl + k + (n_pad if q < pl else 0))
        ):
            continue
        try:
            return _renames_logits(lo, lt, rows_o, bodies, cut[0])
        except AssertionError:
            continue
    raise AssertionError(
        f"no reading of the history {sorted(readings)[:5]} makes the logits a renaming"
    )


def _renames_logits(lo, lt, rows_o, bodies, new_ids) -> bool:
    """One renaming p of the original ids, read from the history and completed by values, with
    twin[..., p(i)] == orig[..., i]; every other twin column copies values the row already has."""
    v = lo.shape[-1]
    p: dict = {}
    for a, b in zip(rows_o, bodies):  # one renaming for the whole case
        for i, j in zip(a, b):
            assert p.setdefault(i, j) == j
    free = [j for j in range(lt.shape[-1]) if j not in set(new_ids) | set(p.values())]
    for i in range(v):
        if i not in p:
            j = next(
                j
                for j in free
                if torch.equal(torch.nan_to_num(lt[..., j]), torch.nan_to_num(lo[..., i]))
            )
            free.remove(j)
            p[i] = j
    assert len(set(p.values())) == v
    idx = torch.tensor([p[i] for i in range(v)])
    assert torch.equal(torch.nan_to_num(lt[..., idx]), torch.nan_to_num(lo))
    added = [j for j in range(lt.shape[-1]) if j not in set(p.values())]
    for c in added:  # an added column repeats values the row already has
        assert any(
            torch.equal(torch.nan_to_num(lt[..., c]), torch.nan_to_num(lo[..., i]))
            for i in range(v)
        )
    return True


def _published(name):
    visible = Course().visible_registry().get(name)
    return [(c.args, c.kwargs, c.expected) for c in visible.cases() if c.raises is None]


def _same_call(args, kwargs, a, k):
    if len(args) != len(a) or set(kwargs) != set(k):
        return False
    for x, y in zip([*args, *kwargs.values()], [*a, *(k[n] for n in kwargs)]):
        if isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor):
            if not (
                isinstance(x, torch.Tensor)
                and isinstance(y, torch.Tensor)
                and x.shape == y.shape
                and x.dtype == y.dtype
                and torch.equal(torch.nan_to_num(x), torch.nan_to_num(y))
            ):
                return False
        elif x != y:
            return False
    return True


def _with_lookup(name, fallback):
    table = _published(name)

    def answer(*args, **kwargs):
        for a, k, expected in table:
            if _same_call(args, kwargs, a, k):
                return expected.clone() if isinstance(expected, torch.Tensor) else expected
        return fallback(*args, **kwargs)

    return answer


def _judge(name, kind, fn):
    course = Course()
    reg = course.hidden_registry() if kind != "check" else course.visible_registry()
    chk = reg.get(name)
    expected = reg.expected_values(name, chk.cases()) if kind != "check" else None
    return evaluate(chk, fn, expected, raise_on_fail=False, quiet=True)


def _naive_softmax(x):
    e = torch.exp(x)
    return e / e.sum(-1, keepdim=True)


def _naive_entropy(p):
    return -(p * torch.log(p)).sum(-1)


def _period_one_cycle(ids, min_repeats=2, max_period=None):
    ids = list(ids)
    k = 0
    while k < len(ids) and ids[-1 - k] == ids[-1]:
        k += 1
    return (1, k) if ids and k >= min_repeats else (0, 0)


@pytest.mark.parametrize(
    "name, fallback",
    [
        ("softmax", _naive_softmax),
        ("log_softmax", lambda x: torch.log(_naive_softmax(x))),
        ("entropy", _naive_entropy),
        ("find_cycle", _period_one_cycle),
    ],
)
def test_red_team_10s_lookup_with_a_crude_fallback_passes_the_visible_check_and_fails_its_twin(
    name, fallback
):
    """The replay of the lookup attacks (threat model, "Visible points need an answer that
    computes"): in the kernel the lookup passes; its twin fails, so outside it does not. Control:
    the crude formula alone fails the visible check (the lookup is what passed it), and the
    memorised guard alone would have let it through (the crude formula passes a third of the hidden
    cases)."""
    answer = _with_lookup(name, fallback)
    assert _judge(name, "check", answer).passed
    assert not _judge(name, "check", fallback).passed
    assert not _judge(name + SUFFIX, "twin", answer).passed


def _stable_softmax(x):
    z = x.double() - x.double().amax(-1, keepdim=True)
    return (z.exp() / z.exp().sum(-1, keepdim=True)).to(x.dtype)


def _entropy_by_hand(p):
    q = p.double()
    terms = torch.where(
        q > 0, -q * torch.log(torch.where(q > 0, q, torch.ones_like(q))), torch.zeros_like(q)
    )
    return terms.sum(-1).to(p.dtype)


def _cycle_by_hand(ids, min_repeats=2, max_period=50):
    ids = list(ids)
    for period in range(1, max_period + 1):
        block, count = ids[len(ids) - period :], 0
        while (
            len(block) == period
            and ids[len(ids) - (count + 1) * period : len(ids) - count * period] == block
        ):
            count += 1
        if count >= min_repeats:
            return (period, count)
    return (0, 0)


@pytest.mark.parametrize(
    "name, honest",
    [("softmax", _stable_softmax), ("entropy", _entropy_by_hand), ("find_cycle", _cycle_by_hand)],
)
def test_an_honest_answer_written_apart_from_the_reference_passes_the_twin(name, honest):
    if not _judge(name, "check", honest).passed:
        pytest.fail(
            f"control: the honest {name} must pass its visible "
            f"check:\n{_judge(name, 'check', honest).message}"
        )
    assert _judge(name + SUFFIX, "twin", honest).passed, _judge(
        name + SUFFIX, "twin", honest
    ).message


def test_a_sampler_twin_moves_the_stated_distribution_with_the_tokens():
    twin = Course().hidden_registry().get("sample" + SUFFIX)
    for case in twin.cases():
        probs, expected = case.args[0], case.expected
        assert isinstance(expected, torch.Tensor) and torch.equal(
            probs.double(), expected.double()
        ), case.label


def test_the_attention_and_embedding_disguises_change_a_correct_answer_only_by_the_renaming():
    """Exact effect, against an oracle that is not the reference: the textbook formula on the
    disguised inputs, with the renaming undone, equals it on the original inputs (to rounding: the
    sums run in another order)."""
    import random

    from autograde.hidden._twins import attention_features, embedding_rows

    def attention(q, k, v):
        w = torch.softmax(
            (q @ k.transpose(-2, -1)) / q.shape[-1] ** 0.5
            + torch.full((q.shape[-2], k.shape[-2]), float("-inf")).triu(1),
            dim=-1,
        )
        return w @ v

    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 5, 8, generator=g, dtype=torch.float64) for _ in range(3))
    (q2, k2, v2), _ = attention_features((0, 1), (2,))((q, k, v), {}, random.Random(1))
    out, out2 = attention(q, k, v), attention(q2, k2, v2)
    assert not torch.equal(v, v2)
    assert torch.allclose(out.sort(-1).values, out2.sort(-1).values, atol=1e-12)
    # columns: the same permutation that moved v's features
    cols = [next(j for j in range(8) if torch.equal(v2[..., j], v[..., i])) for i in range(8)]
    assert torch.allclose(out2[..., cols], out, atol=1e-12)

    tok, pos = torch.randn(30, 6, generator=g), torch.randn(7, 6, generator=g)
    ids = torch.randint(0, 30, (2, 7), generator=g)
    (tok2, pos2, ids2), _ = embedding_rows((tok, pos, ids), {}, random.Random(2))
    emb, emb2 = tok[ids] + pos[: ids.shape[1]], tok2[ids2] + pos2[: ids.shape[1]]
    assert not torch.equal(ids, ids2) and torch.equal(emb.sort(-1).values, emb2.sort(-1).values)


def test_red_team_11s_lookup_keyed_on_ids_renamed_by_first_appearance_fails_the_twin():
    """A find_cycle table (a red team's) keyed on the ids renamed in order of first appearance,
    which a renaming alone leaves unchanged (2/24 unflagged). The twin also leads each sequence with
    ids it never uses."""

    def canonical(ids):
        names: dict = {}
        return tuple(names.setdefault(int(i), len(names)) for i in ids)

    published = {
        (canonical(a[0]), tuple(sorted(k.items()))): e
        for a, k, e in _published("find_cycle")
        # the written cases (a derived one repeats a call)
        if isinstance(e, tuple) and len(e) == 2
    }

    def answer(ids, max_period=50, min_repeats=2):
        key = (
            canonical(ids),
            tuple(
                sorted(
                    {
                        **({"max_period": max_period} if max_period != 50 else {}),
                        **({"min_repeats": min_repeats} if min_repeats != 2 else {}),
                    }.items()
                )
            ),
        )
        if key in published:
            return tuple(int(v) for v in published[key])
        return _period_one_cycle(ids, min_repeats)

    assert _judge("find_cycle", "check", answer).passed
    # control: the table earned the pass
    assert not _judge("find_cycle", "check", _period_one_cycle).passed
    assert not _judge("find_cycle" + SUFFIX, "twin", answer).passed


def _ban_last_match_only(logits, ids, n):
    """A partial ban: only the n-gram whose prefix occurred most recently (a red team's
    fallback)."""
    if n < 1:
        raise ValueError("n must be >= 1")
    out = logits.clone()
    for b in range(ids.shape[0]):
        row = [int(i) for i in ids[b].tolist()]
        pre = row[len(row) - n + 1 :] if n > 1 else []
        for i in range(len(row) - n, -1, -1):
            if row[i : i + n - 1] == pre:
                out[b, row[i + n - 1]] = float("-inf")
                break
    return out


def test_red_team_11s_canonical_lookup_of_a_history_fails_the_extended_twin():
    """A ban_repeated_ngrams table (a red team's) keyed on the history renamed by first appearance,
    mapped the published bans back through that naming, and fell back to a partial ban (3/24
    unflagged against a twin that only permuted the vocabulary). The extended twin leads the history
    with ids it never used, so the key differs."""

    def canonical(row):
        names: dict = {}
        return tuple(names.setdefault(i, len(names)) for i in row), names

    table = {}
    for (logits, ids, n, *_), kwargs, expected in _published("ban_repeated_ngrams"):
        for b in range(ids.shape[0]):
            key, names = canonical([int(i) for i in ids[b].tolist()])
            banned = (
                ((expected[b] == float("-inf")) & (logits[b] != float("-inf")))
                .nonzero()
                .reshape(-1)
                .tolist()
            )
            if all(t in names for t in banned):  # a ban is of an id the history holds
                table[(key, n)] = [names[t] for t in banned]

    def answer(logits, ids, n):
        out = _ban_last_match_only(logits, ids, n)
        for b in range(ids.shape[0]):
            key, names = canonical([int(i) for i in ids[b].tolist()])
            if (key, n) in table:
                back = {v: k for k, v in names.items()}
                out[b] = logits[b]
                for t in table[(key, n)]:
                    out[b, back[t]] = float("-inf")
        return out

    assert table, "no published case to key on"
    assert _judge("ban_repeated_ngrams", "check", answer).passed, _judge(
        "ban_repeated_ngrams", "check", answer
    ).message
    # control: the table earned it
    assert not _judge("ban_repeated_ngrams", "check", _ban_last_match_only).passed
    assert not _judge("ban_repeated_ngrams" + SUFFIX, "twin", answer).passed


def _sorted_key_lookup(name, fallback):
    """A lookup (a red team's): each row keyed on its sorted values minus its max, which a
    permutation of the vocabulary does not change; the published answer read back through the same
    sort."""
    table = {}
    for args, kwargs, expected in _published(name):
        x, rest = args[0], args[1:]
        if (
            not isinstance(expected, torch.Tensor)
            or kwargs
            or x.dim() == 0
            or x.device.type != "cpu"
        ):
            continue  # a derived case (called twice, on meta) repeats a written one
        rows, outs = x.reshape(-1, x.shape[-1]), expected.reshape(-1, x.shape[-1])
        for r, o in zip(rows, outs):
            order = torch.argsort(r, stable=True)
            key = (tuple((r[order] - r.max()).tolist()), str(x.dtype), repr(rest))
            # two cases on one input: the first (exact) one, not a rounded table
            table.setdefault(key, o[order])

    def answer(x, *rest):
        out = fallback(x, *rest)
        flat, res = x.reshape(-1, x.shape[-1]), out.reshape(-1, x.shape[-1]).clone()
        for i, r in enumerate(flat):
            order = torch.argsort(r, stable=True)
            hit = table.get((tuple((r[order] - r.max()).tolist()), str(x.dtype), repr(rest)))
            if hit is not None:
                res[i, order] = hit.to(res.dtype)
        return res.reshape(out.shape)

    return answer


def _naive_temperature(x, T):
    if T < 0:
        raise ValueError("T must be >= 0")
    return _naive_softmax(x / T) if T > 0 else _naive_softmax(x / 1e-10)


@pytest.mark.parametrize(
    "name, fallback", [("softmax", _naive_softmax), ("probs_at_temperature", _naive_temperature)]
)
def test_red_team_12s_lookup_keyed_on_sorted_values_fails_the_grown_twin(name, fallback):
    """A table (a red team's: 7/26 unflagged on 02) keyed on each row's sorted values minus its max
    survives any permutation of the vocabulary. The twin also grows the vocabulary by copied
    columns, which changes every key. Controls: the lookup passes the visible check (the naive
    formula alone does not), and a twin that only permutes, as before, lets it through."""
    from autograde.hidden._twins import twin

    answer = _sorted_key_lookup(name, fallback)
    assert _judge(name, "check", answer).passed, _judge(name, "check", answer).message
    assert not _judge(name, "check", fallback).passed
    assert not _judge(name + SUFFIX, "twin", answer).passed
    permuted_only = twin(Course().visible_registry().get(name), "vocab")
    reference = _reference_of("02_logits_softmax", name)
    expected = [reference(*c.args, **c.kwargs) for c in permuted_only.cases()]
    assert evaluate(permuted_only, reference, expected, raise_on_fail=False, quiet=True).passed
    assert evaluate(permuted_only, answer, expected, raise_on_fail=False, quiet=True).passed


def _recent_only(fn, w):
    """A partial answer: the history cut to its last w ids (w just past the farthest visible case,
    as a red team cut it)."""

    def answer(logits, ids, *rest, **kw):
        return fn(logits, ids[..., -w:] if ids.shape[-1] > w else ids, *rest, **kw)

    return answer


def _reference_of(assignment, exercise):
    from autograde.references import reference_namespace

    course = Course()
    nb = next(p for p in course.source_notebooks(assignment) if f"def {exercise}(" in p.read_text())
    return reference_namespace(course, nb)[exercise]


def _short_histories(name):
    """The visible check of ``name`` without the cases whose history is longer than 400 ids (issue
    35's cost cases look 8000 ids back, so they alone now catch that cut; the twin must catch it
    without them)."""
    import dataclasses

    chk = Course().visible_registry().get(name)
    written = getattr(chk.cases, "__wrapped_cases__", chk.cases)
    return dataclasses.replace(
        chk, cases=lambda: [c for c in written() if c.args[1].shape[-1] <= 400]
    )


@pytest.mark.parametrize("name", ["presence_frequency_penalty", "repetition_penalty"])
def test_red_team_12s_recent_history_answer_fails_the_padded_twin(name):
    """A red team cut each history to the last W ids, W the smallest that passes the visible check
    (8-28), and kept every visible point of 05 (10/24, unflagged): the twin's lead sits at the
    start, so a cut from the end never reached it. The padded twin puts 60-120 fresh ids inside the
    history."""
    ref = _reference_of("05_debugging_generation", name)
    short = _short_histories(name)

    def passes(chk, fn):
        return evaluate(chk, fn, None, raise_on_fail=False, quiet=True).passed

    w = next(w for w in range(1, 400) if passes(short, _recent_only(ref, w)))
    answer = _recent_only(ref, w)
    assert w > 1 and not passes(short, _recent_only(ref, w - 1))  # control: w is the smallest
    assert not _judge(name + SUFFIX, "twin", answer).passed
    # and the visible check itself now sees it
    if name == "presence_frequency_penalty":
        assert not _judge(name, "check", answer).passed


def _cut_rate(w):
    """repetition_rate that looks back only w n-grams."""

    def answer(ids, n=4):
        seq = list(ids.tolist() if isinstance(ids, torch.Tensor) else ids)
        if n < 1:
            raise ValueError("n must be >= 1")
        grams = [tuple(seq[i : i + n]) for i in range(len(seq) - n + 1)]
        return (
            sum(g in grams[max(0, i - w) : i] for i, g in enumerate(grams)) / len(grams)
            if grams
            else 0.0
        )

    return answer


def _cut_ban(w):
    """ban_repeated_ngrams that looks at the last w ids only."""
    return _recent_only(_reference_of("05_debugging_generation", "ban_repeated_ngrams"), w)


@pytest.mark.parametrize(
    "name, cut", [("repetition_rate", _cut_rate), ("ban_repeated_ngrams", _cut_ban)]
)
def test_a_look_back_cut_must_reach_300_ids_back_to_pass_the_visible_check(name, cut):
    """For the n-gram exercises the twin cannot put fresh ids inside the history (they break and
    make n-grams: an honest answer was flagged), so the visible check itself asks for a long
    look-back: the smallest cut that passes it reaches 300 ids back, and it still fails the hidden
    check (a repeat 2000 back). The red team's cuts were 22 and 28."""
    w = next(
        w
        for w in (1, 2, 4, 8, 16, 22, 28, 64, 128, 256, 290, 300, 301, 302, 303, 304, 400)
        if _judge(name, "check", cut(w)).passed
    )
    assert w >= 290, w
    assert not _judge(name + "_hidden", "hidden", cut(w)).passed


def _notes_top_p(logits, top_p, min_tokens_to_keep=1):
    """The notes' rule, keep j while the mass before it is <= p: wrong only where a prefix sums to
    exactly p."""
    if (
        not 0 <= top_p <= 1
        or isinstance(min_tokens_to_keep, bool)
        or not isinstance(min_tokens_to_keep, int)
        or min_tokens_to_keep < 1
    ):
        raise ValueError("top_p must be in [0, 1] and min_tokens_to_keep a positive int")
    probs = torch.softmax(logits.float(), dim=-1)
    sp, order = probs.sort(dim=-1, descending=True, stable=True)
    keep = (sp.cumsum(-1) - sp) <= top_p
    keep[..., :min_tokens_to_keep] = True
    return logits.masked_fill(~torch.zeros_like(keep).scatter(-1, order, keep), float("-inf"))


def test_red_team_13s_rounded_probability_lookup_fails_the_zero_column_twin():
    """A top-p (a red team's: 19/40 against 14/40 on 03, unflagged) keyed on each row's sorted
    probabilities rounded to 4 places, with the notes' rule (wrong only at exact ties with p) behind
    it; a permutation leaves the key alone. The twin adds columns of probability exactly 0 (-inf, or
    finite far below the max), which moves no sum, so no new tie with p appears, and changes the
    key. Controls: the notes' rule alone fails the visible check; a permutation-only twin lets the
    lookup through."""
    from autograde.hidden._twins import twin

    def key(row, top_p, m):
        p = torch.softmax(row.float(), -1)
        sp, order = p.sort(descending=True, stable=True)
        return (tuple(round(v, 4) for v in sp.tolist()), float(top_p), m), order

    table = {}
    for args, kwargs, expected in _published("top_p_filter"):
        x = args[0]
        if not isinstance(expected, torch.Tensor) or x.device.type != "cpu":
            continue
        m = kwargs.get("min_tokens_to_keep", 1)
        for r, e in zip(x.reshape(-1, x.shape[-1]), expected.reshape(-1, x.shape[-1])):
            k, order = key(r, args[1], m)
            table.setdefault(k, torch.isfinite(e)[order])

    def answer(logits, top_p, min_tokens_to_keep=1):
        out = _notes_top_p(logits, top_p, min_tokens_to_keep)
        flat, res = logits.reshape(-1, logits.shape[-1]), out.reshape(-1, logits.shape[-1]).clone()
        for i, r in enumerate(flat):
            k, order = key(r, top_p, min_tokens_to_keep)
            if k in table:
                keep = torch.zeros(r.shape, dtype=torch.bool).scatter(0, order, table[k])
                res[i] = r.masked_fill(~keep, float("-inf"))
        return res.reshape(out.shape)

    assert _judge("top_p_filter", "check", answer).passed, _judge(
        "top_p_filter", "check", answer
    ).message
    assert not _judge("top_p_filter", "check", _notes_top_p).passed
    assert not _judge("top_p_filter" + SUFFIX, "twin", answer).passed
    permuted_only = twin(Course().visible_registry().get("top_p_filter"), "vocab")
    reference = _reference_of("03_sampling", "top_p_filter")
    expected = [reference(*c.args, **c.kwargs) for c in permuted_only.cases()]
    assert evaluate(permuted_only, answer, expected, raise_on_fail=False, quiet=True).passed
