"""Twins of visible checks: the same cases in disguise, so that a visible check's points need an
answer that computes.

A visible check's cases and expected values are public: an answer can carry a table of them and
compute something cruder for every other input (the overflowing softmax plus a lookup kept 5/26 on
02 unflagged, because the crude formula still passes half of the hidden cases: threat model,
"Visible points need an answer that computes";
test_twins.py::test_red_team_10s_lookup_with_a_crude_fallback_passes_the_visible_check_and_fails_its_twin). A twin is a hidden check whose
cases are the visible check's own, changed in a way that keeps what each case tests and that no
correct answer can tell from the original:

- ``vocab``: the vocabulary axis permuted (every float tensor whose last axis is the vocabulary) and
the token
  ids that index it renamed alike. Ties, -inf entries, extremes, batch shapes and dtypes stay what
  they were.
- ``ids``: the token ids of an id sequence renamed by a random one-to-one map into [0, 49 152),
SmolLM2's
  vocabulary (only equality of ids matters to the exercises that take them), and each sequence led
  by 1-4 ids it never uses (the answer at its end is unchanged; a lookup keyed on ids renamed by
  first appearance misses);
- a function of its own for other exercises: attention's feature axes permuted (q and k alike, v on
its own),
  an embedding table's rows permuted and the ids renamed alike.

Expected values are the reference solution's outputs on the twin cases (stored by ``release``, like
every hidden check's); a case that states its own expected value (a sampler's distribution) has it
moved with the tokens (``move_expected``). Outside the kernel a visible check passes only if its
twin passes too (``autograde.verify``); the twin's inputs, like every hidden input, never reach the
student. The permutations are drawn from a seed made of the check name and case number: the same in
every release, and secret only as the hidden package is (a student who reads this file knows the
kind of disguise, not the draw).
"""  # noqa: E501

from __future__ import annotations

import dataclasses
import random
from typing import Any, Callable

import torch

from course_lib.checks.engine import MISSING, Case, Check

SUFFIX = "__twin"
# renamed ids: multi-digit, below the vocabulary size of the course's model (SmolLM2)
ID_RANGE = 49_152


def twin_name(visible: str) -> str:
    """The name of the twin of visible check ``visible``."""
    return visible + SUFFIX


def twins_of(registry: Any, calls: list[tuple[str, str, str]]) -> dict[str, str]:
    """{twin name: visible check name} for the visible checks among a notebook's check calls
    (``check_calls``: (grade_id, kind, name)) that have a twin in ``registry`` (the hidden
    registry)."""
    out = {}
    for _, kind, name in calls:
        if kind != "check":
            continue
        try:
            registry.get(twin_name(name))
        except KeyError:
            continue
        out[twin_name(name)] = name
    return out


def _rng(name: str, index: int) -> random.Random:
    return random.Random(f"twin/{name}/{index}")


def permutation(n: int, rng: random.Random) -> list[int]:
    """A random permutation of range(n) that moves at least one element (n >= 2)."""
    perm = list(range(n))
    while perm == sorted(perm):
        rng.shuffle(perm)
    return perm


def _vocab_size(case: Case) -> int | None:
    for x in [*case.args, *case.kwargs.values()]:
        if isinstance(x, torch.Tensor) and x.is_floating_point() and x.dim() >= 1:
            return int(x.shape[-1])
    return None


def _vocab_mover(v: int, rng: random.Random) -> Callable[[Any], Any]:
    """new[..., j] = old[..., perm[j]] for the vocabulary axis; an old id i becomes the new id
    inv[i]."""
    perm = permutation(v, rng)
    index = torch.tensor(perm)
    inv = [0] * v
    for j, i in enumerate(perm):
        inv[i] = j

    def move(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            if x.is_floating_point():
                return x[..., index].clone() if x.dim() >= 1 and x.shape[-1] == v else x.clone()
            if x.dtype in (torch.int64, torch.int32) and x.numel():
                table = torch.tensor(inv, dtype=x.dtype)
                inside = (x >= 0) & (x < v)
                return torch.where(inside, table[x.clamp(0, v - 1)], x)
            return x.clone()
        if isinstance(x, (list, tuple)) and x and all(type(i) is int for i in x):
            return type(x)(inv[i] if 0 <= i < v else i for i in x)
        return x

    return move


def _ids_mover(case: Case, rng: random.Random) -> Callable[[Any], Any] | None:
    seen: list[int] = []

    def collect(x: Any) -> None:
        if isinstance(x, torch.Tensor) and not x.is_floating_point() and x.dtype != torch.bool:
            seen.extend(int(i) for i in x.reshape(-1).tolist())
        elif isinstance(x, (list, tuple)):
            for item in x:
                if type(item) is int:
                    seen.append(item)
                else:
                    collect(item)

    collect(case.args[0] if case.args else None)
    distinct = sorted(set(seen))
    if not distinct:
        return None
    drawn = rng.sample(range(ID_RANGE), len(distinct) + 4)
    new, fresh = drawn[: len(distinct)], drawn[len(distinct) : len(distinct) + rng.randint(1, 4)]
    if new == distinct:
        new = new[1:] + new[:1] if len(new) > 1 else [new[0] + 1]
    table = dict(zip(distinct, new))

    def rename(x: Any) -> Any:
        if isinstance(x, torch.Tensor) and not x.is_floating_point() and x.dtype != torch.bool:
            return torch.tensor(
                [table[int(i)] for i in x.reshape(-1).tolist()], dtype=x.dtype
            ).reshape(x.shape)
        if isinstance(x, (list, tuple)):
            return type(x)(table[i] if type(i) is int else rename(i) for i in x)
        return x

    def move(x: Any) -> Any:
        """Renamed, and each sequence led by a few ids it never uses (a lookup keyed on the ids
        renamed in order of first appearance, which a renaming alone does not change, passed:
        test_twins.py::
        test_red_team_11s_lookup_keyed_on_ids_renamed_by_first_appearance_fails_the_twin)."""
        x = rename(x)
        if isinstance(x, torch.Tensor) and x.dim() >= 1:
            lead = torch.tensor(fresh, dtype=x.dtype).expand(*x.shape[:-1], len(fresh))
            return torch.cat([lead, x], dim=-1)
        if (
            isinstance(x, (list, tuple))
            and x
            and all(isinstance(s, (list, tuple, torch.Tensor)) for s in x)
        ):
            return type(x)(move_seq(s) for s in x)
        return move_seq(x)

    def move_seq(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            return torch.cat([torch.tensor(fresh, dtype=x.dtype), x]) if x.dim() == 1 else x
        return type(x)([*fresh, *x]) if isinstance(x, (list, tuple)) else x

    return move


# fresh ids inserted into a history by ``pad``: far more than any look-back a visible case needs
PAD = (60, 120)


def _pad_at(length: int, rng: random.Random) -> int:
    """Where a history of ``length`` ids gets its filler: after one of its first third (never at
    either end)."""
    return 1 + rng.randrange(max(1, length // 3)) if length >= 2 else length


def _extend(
    args: tuple, kwargs: dict, v: int, rng: random.Random, how: str = "copy", pad: bool = False
) -> tuple[tuple, dict]:
    """The vocabulary grown by 1-4 tokens and every id history led by the new ids, which it never
    used before; ``prompt_len`` moves with it, so the lead is prompt. ``how``: ``copy`` (new columns
    copy random columns: no new kind of value), ``split`` (for a distribution: 1-4 columns halved,
    each half its own column; halving is exact, so every row still sums to what it did) or ``zeros``
    (for threshold rules: -inf columns and finite ones so far below the row's max that their
    probability is exactly 0; no sum moves, so no new tie with a threshold). ``pad``: also a block
    of 60-120 fresh ids (more new columns) inside the history, after one of its first third, so that
    what an answer must look back to is farther away (penalties only: inside an n-gram history fresh
    ids make and break n-grams, which flagged an honest answer as a lookup).

    A permutation alone keeps the pattern of repeats in a history: a lookup keyed on the ids renamed
    in order of first appearance kept 3/24 through ban_repeated_ngrams's twin (test_twins.py::
    test_red_team_11s_canonical_lookup_of_a_history_fails_the_extended_twin); and it keeps each
    row's sorted values: a lookup keyed on them (minus the row's max) kept 7/26 on 02
    (test_twins.py:: test_red_team_12s_lookup_keyed_on_sorted_values_fails_the_grown_twin). A
    look-back cut just past the farthest visible case (8-28 ids) passed every 05 visible check and
    its twin until ``pad`` (test_twins.py::
    test_red_team_12s_recent_history_answer_fails_the_padded_twin). Cases with a ``window`` are not
    extended (an honest answer's window start not clamped at 0, a slip the hidden check charges, was
    flagged as a lookup when the lead moved the history's length into the slip's range)."""
    if how == "split":
        cols = rng.sample(range(v), min(v, rng.randint(1, 4)))
    elif how == "zeros":
        # -1: a -inf column, -2: a finite one far below
        cols = [-1 - (j % 2) for j in range(rng.randint(1, 4))]
    else:
        cols = [rng.randrange(v) for _ in range(rng.randint(1, 4))]
    lead = list(range(v, v + len(cols)))
    n_pad = rng.randint(*PAD) if pad else 0
    fill_cols = [rng.randrange(v) for _ in range(n_pad)]
    filler = list(range(v + len(cols), v + len(cols) + n_pad))
    at: dict[str, int] = {}

    def grow(x: Any) -> Any:
        if (
            isinstance(x, torch.Tensor)
            and x.is_floating_point()
            and x.dim() >= 1
            and x.shape[-1] == v
        ):
            if how == "zeros":
                top = (
                    x.double().masked_fill(~torch.isfinite(x), float("-inf")).amax(-1, keepdim=True)
                )
                # exp((far - top) / T) is exactly 0 for any T the cases use
                far = top - 1e5 * top.abs().clamp(min=1)
                extra = [torch.full_like(top, float("-inf")) if c == -1 else far for c in cols]
                return torch.cat([x, torch.cat(extra, dim=-1).to(x.dtype)], dim=-1)
            if how == "split":
                half = x[..., cols] / 2
                x = x.clone()
                x[..., cols] = half
                return torch.cat([x, half, x[..., fill_cols]], dim=-1)
            return torch.cat([x, x[..., cols], x[..., fill_cols]], dim=-1)
        if isinstance(x, torch.Tensor) and x.dtype in (torch.int64, torch.int32) and x.dim() >= 1:
            q = (
                at.setdefault("q", _pad_at(x.shape[-1], rng))
                if n_pad and x.shape[-1]
                else x.shape[-1]
            )
            parts = [
                torch.tensor(lead, dtype=x.dtype).expand(*x.shape[:-1], len(lead)),
                x[..., :q],
                torch.tensor(filler[: n_pad if x.shape[-1] else 0], dtype=x.dtype).expand(
                    *x.shape[:-1], n_pad if x.shape[-1] else 0
                ),
                x[..., q:],
            ]
            return torch.cat(parts, dim=-1)
        return x

    args, kwargs = tuple(grow(a) for a in args), {k: grow(x) for k, x in kwargs.items()}
    if isinstance(kwargs.get("prompt_len"), int):
        inside = "q" in at and at["q"] < kwargs["prompt_len"]
        kwargs["prompt_len"] += len(lead) + (n_pad if inside else 0)
    return args, kwargs


def _vocab_moved(
    case: Case, rng: random.Random, extend: bool | str, pad: bool
) -> tuple[tuple, dict, Callable[[Any], Any]] | None:
    """A vocab twin's (args, kwargs, mover): the vocabulary permuted (and grown, with ``extend``);
    None for a case with no vocabulary of 2 or more to permute."""
    v = _vocab_size(case)
    if not v or v < 2:
        return None
    args, kwargs = tuple(case.args), dict(case.kwargs)
    # a window counts back from the end: a lead changes no correct answer there, but an
    # honest slip (a window start not clamped at 0 wraps around) reads it, and a twin
    # must not flag honest slips
    if extend and kwargs.get("window") is None:
        args, kwargs = _extend(
            args,
            kwargs,
            v,
            rng,
            extend if extend in ("split", "zeros") else "copy",
            pad,
        )
        v = _vocab_size(Case(args, kwargs))
    move = _vocab_mover(v, rng)
    args = tuple(move(a) for a in args)
    kwargs = {k: move(x) for k, x in kwargs.items()}
    return args, kwargs, move


def _disguised(
    case: Case,
    rng: random.Random,
    kind: str | Callable,
    move_expected: bool,
    extend: bool | str,
    pad: bool,
) -> Case | None:
    """One written case in ``twin``'s disguise; None where the disguise cannot apply to it."""
    if callable(kind):
        args, kwargs = kind(tuple(case.args), dict(case.kwargs), rng)
        return Case(
            args,
            kwargs,
            f"{case.label} [twin]",
            MISSING,
            case.compare,
            case.repeat,
            fresh=case.fresh,
        )
    if kind == "vocab":
        moved = _vocab_moved(case, rng, extend, pad)
        if moved is None:
            return None
        args, kwargs, move = moved
    else:
        ids_move = _ids_mover(case, rng)
        if ids_move is None:
            return None
        move = ids_move
        args, kwargs = (move(case.args[0]), *case.args[1:]), dict(case.kwargs)
    expected = MISSING
    if case.expected is not MISSING and move_expected:
        expected = move(case.expected)
    return Case(
        args,
        kwargs,
        f"{case.label} [twin]",
        expected,
        case.compare,
        case.repeat,
        fresh=case.fresh,
    )


def twin(
    visible: Check,
    kind: str | Callable,
    *,
    move_expected: bool = False,
    extend: bool | str = False,
    pad: bool = False,
    skip: Callable[[Case], bool] = lambda case: False,
) -> Check:
    """The twin of ``visible``: a hidden check on its written cases in disguise.

    kind: ``vocab``, ``ids``, or a function (args, kwargs, rng) -> (args, kwargs) for an exercise of
    another kind. ``extend`` (vocab): grow the vocabulary, ``True`` or ``"copy"`` by copied columns,
    ``"split"`` by halved ones (a distribution), ``"zeros"`` by columns of probability 0 (threshold
    rules), and lead any id history with the new ids; ``pad`` (with ``extend``): also put fresh ids
    inside each history (``_extend``). ``skip``: cases whose point the disguise would change (a tie
    broken by id at T = 0 whose expected value is stated, not computed); cases that must raise are
    left out (their inputs are rejected, not computed on)."""
    if extend and (kind != "vocab" or move_expected):
        raise ValueError("extend is for vocab twins whose expected values the reference computes")
    if extend not in (False, True, "copy", "split", "zeros") or (pad and not extend):
        raise ValueError(
            f"extend={extend!r}, pad={pad!r}: extend is copy, split or zeros, and pad needs it"
        )
    if not callable(kind) and kind not in ("vocab", "ids"):
        raise ValueError(f"unknown twin kind {kind!r}")
    written = getattr(visible.cases, "__wrapped_cases__", visible.cases)

    def cases() -> list[Case]:
        out = []
        for i, case in enumerate(written()):
            # a cost case measures lines, which a twin does not (its contract has no cost): not
            # twinned
            if case.raises is not None or case.count_steps or skip(case):
                continue
            disguised = _disguised(case, _rng(visible.name, i), kind, move_expected, extend, pad)
            if disguised is not None:
                out.append(disguised)
        return out

    contract = dataclasses.replace(
        visible.contract, twice=False, float64=False, meta=False, cost=(), cost_cap=()
    )
    return Check(
        twin_name(visible.name),
        visible.exercise,
        cases,
        visible.compare,
        reference=visible.reference,
        allow_mutation=visible.allow_mutation,
        contract=contract,
        forbidden=visible.forbidden,
        forbidden_ops=visible.forbidden_ops,
    )


def twins(visible_checks: list[Check], spec: dict[str, dict]) -> list[Check]:
    """Twins of the named visible checks: spec = {visible name: twin() keywords, including kind}."""
    by_name = {c.name: c for c in visible_checks}
    return [twin(by_name[name], **kw) for name, kw in spec.items()]


def attention_features(q_like: tuple[int, ...], v_like: tuple[int, ...]) -> Callable:
    """A disguise for attention: the feature (last) axis of the query and key arguments permuted
    alike (every score q·k unchanged), that of the value arguments by another permutation (the
    output's columns move with it)."""

    def disguise(args: tuple, kwargs: dict, rng: random.Random) -> tuple[tuple, dict]:
        p = torch.tensor(permutation(args[q_like[0]].shape[-1], rng))
        s = torch.tensor(permutation(args[v_like[0]].shape[-1], rng))
        return tuple(
            a[..., p].clone() if i in q_like else a[..., s].clone() if i in v_like else a
            for i, a in enumerate(args)
        ), kwargs

    return disguise


def embedding_rows(args: tuple, kwargs: dict, rng: random.Random) -> tuple[tuple, dict]:
    """A disguise for (token_table, position_table, token_ids): the token table's rows permuted and
    the ids renamed alike (the same vectors looked up), the model axis of both tables permuted alike
    (the output's columns move)."""
    tok, pos, ids = args
    perm = permutation(tok.shape[0], rng)
    inv = torch.empty(len(perm), dtype=torch.long)
    inv[torch.tensor(perm)] = torch.arange(len(perm))
    cols = torch.tensor(permutation(tok.shape[1], rng))
    inside = (ids >= 0) & (ids < tok.shape[0])
    new_ids = torch.where(inside, inv[ids.clamp(0, tok.shape[0] - 1)].to(ids.dtype), ids)
    return (tok[torch.tensor(perm)][:, cols].clone(), pos[:, cols].clone(), new_ids), kwargs
