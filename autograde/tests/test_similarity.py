"""Issue 34, part 5: the similarity report finds planted copies and leaves honest work alone.

The class answers two exercises of 03_sampling (top_p_filter, distinct_n) in the real released
notebook:
- h1..h5: independent honest answers written by hand in five styles (sort+scatter,
argsort+gather+where, a
  per-row Python loop, a cutoff value, NumPy; a set, a Counter of zips, a list, a comprehension,
  itertools);
- c1 copies h1 with every name changed; c2 copies h1 with independent lines reordered and other
names;
- r1, r2 both paste the reference solution (given to nobody, but what an honest student may converge
on):
  boilerplate, so their pair must not rank with the copies;
- u hands in the untouched notebook (nothing but given code).
Truth is the construction: the three pairs among {h1, c1, c2} are copies, every other pair is not.
Cost: ~1 s (copydetect on 9 short texts).
"""

from __future__ import annotations

import copy
import csv
import json
from pathlib import Path

import pytest

from autograde.course import REPO
from autograde.similarity import write_similarity
from autograde.spreadsheet import uncell

pytest.importorskip("copydetect")

A = "03_sampling"
SIG = {
    "top_p_filter": "def top_p_filter(logits: torch.Tensor, p: float, min_tokens_to_keep: int = "
    "1) -> torch.Tensor:\n"
    '    """Keep the smallest set of most likely tokens whose probability reaches p (Holtzman et '
    "al. "
    '2020)."""\n',
    "distinct_n": "def distinct_n(sequences: list[list[int]], n: int) -> float:\n"
    '    """Distinct n-grams / all n-grams, pooled over sequences (n-grams never cross '
    'sequences)."""\n',
}

TOP_P = {
    "h1": """\
    probs = torch.softmax(logits.float(), dim=-1)
    sorted_probs, idx = probs.sort(dim=-1, descending=True)
    cum = sorted_probs.cumsum(-1)
    remove = cum - sorted_probs >= p
    remove[..., :min_tokens_to_keep] = False
    mask = torch.zeros_like(remove).scatter(-1, idx, remove)
    out = logits.clone()
    out[mask] = float('-inf')
    return out
""",
    "h2": """\
    if p >= 1:
        return logits.clone()
    order = torch.argsort(logits, dim=-1, descending=True)
    ranked = torch.gather(logits, -1, order)
    cdf = torch.cumsum(torch.softmax(ranked, -1), -1)
    shifted = torch.cat([torch.zeros_like(cdf[..., :1]), cdf[..., :-1]], -1)
    keep_ranked = shifted < p
    keep_ranked[..., :min_tokens_to_keep] = True
    keep = torch.empty_like(keep_ranked)
    keep.scatter_(-1, order, keep_ranked)
    return torch.where(keep, logits, torch.full_like(logits, -float("inf")))
""",
    "h3": """\
    flat = logits.reshape(-1, logits.shape[-1])
    result = torch.full_like(flat, float("-inf"))
    for r in range(flat.shape[0]):
        pr = torch.softmax(flat[r].double(), 0)
        total = 0.0
        chosen = []
        for tok in torch.argsort(pr, descending=True).tolist():
            if total >= p and len(chosen) >= min_tokens_to_keep:
                break
            chosen.append(tok)
            total += pr[tok].item()
        result[r, chosen] = flat[r, chosen]
    return result.reshape(logits.shape)
""",
    "h4": """\
    assert 0 <= p <= 1
    vals, _ = torch.sort(logits, dim=-1, descending=True)
    pv = vals.softmax(dim=-1)
    before = torch.cumsum(pv, dim=-1) - pv
    n_keep = (before < p).sum(dim=-1, keepdim=True).clamp(min=min_tokens_to_keep)
    cutoff = vals.gather(-1, n_keep - 1)
    return logits.masked_fill(logits < cutoff, -torch.inf)
""",
    "h5": """\
    import numpy as np
    arr = logits.detach().cpu().numpy()
    e = np.exp(arr - arr.max(axis=-1, keepdims=True))
    probabilities = e / e.sum(axis=-1, keepdims=True)
    ranks = np.argsort(-probabilities, axis=-1, kind="stable")
    ordered = np.take_along_axis(probabilities, ranks, -1)
    keep_sorted = (np.cumsum(ordered, -1) - ordered) < p
    keep_sorted[..., :min_tokens_to_keep] = True
    keep = np.zeros_like(keep_sorted)
    np.put_along_axis(keep, ranks, keep_sorted, -1)
    return logits.masked_fill(~torch.from_numpy(keep), float("-inf"))
""",
    # h1, every name changed
    "c1": """\
    dist = torch.softmax(logits.float(), dim=-1)
    sp, perm = dist.sort(dim=-1, descending=True)
    running = sp.cumsum(-1)
    drop = running - sp >= p
    drop[..., :min_tokens_to_keep] = False
    m = torch.zeros_like(drop).scatter(-1, perm, drop)
    res = logits.clone()
    res[m] = float('-inf')
    return res
""",
    # h1, independent lines reordered (the clone first), other names
    "c2": """\
    answer = logits.clone()
    pr = torch.softmax(logits.float(), dim=-1)
    s_pr, ix = pr.sort(dim=-1, descending=True)
    csum = s_pr.cumsum(-1)
    rm = csum - s_pr >= p
    rm[..., :min_tokens_to_keep] = False
    msk = torch.zeros_like(rm).scatter(-1, ix, rm)
    answer[msk] = float('-inf')
    return answer
""",
}
DISTINCT = {
    "h1": """\
    seen = set()
    total = 0
    for seq in sequences:
        for start in range(len(seq) - n + 1):
            seen.add(tuple(seq[start:start + n]))
            total += 1
    return len(seen) / total if total else 0.0
""",
    "h2": """\
    from collections import Counter
    counts = Counter()
    for s in sequences:
        counts.update(zip(*(s[i:] for i in range(n))))
    n_all = sum(counts.values())
    if n_all == 0:
        return 0.0
    return len(counts) / n_all
""",
    "h3": """\
    all_grams = []
    for ids in sequences:
        all_grams.extend(tuple(ids[k:k+n]) for k in range(0, len(ids) - n + 1))
    if not all_grams:
        return 0.0
    unique = {g for g in all_grams}
    return float(len(unique)) / float(len(all_grams))
""",
    "h4": """\
    if n <= 0:
        raise ValueError("n")
    ngrams = [tuple(x[j:j + n]) for x in sequences for j in range(max(len(x) - n + 1, 0))]
    return len(set(ngrams)) / max(len(ngrams), 1) if ngrams else 0.0
""",
    "h5": """\
    import itertools
    grams = list(itertools.chain.from_iterable(
        (tuple(seq[i:i + n]) for i in range(len(seq) - n + 1)) for seq in sequences))
    return 0.0 if len(grams) == 0 else len(set(grams)) / len(grams)
""",
    "c1": """\
    uniq = set()
    count = 0
    for row in sequences:
        for i in range(len(row) - n + 1):
            uniq.add(tuple(row[i:i + n]))
            count += 1
    return len(uniq) / count if count else 0.0
""",
    "c2": """\
    num = 0
    bag = set()
    for ids in sequences:
        for pos in range(len(ids) - n + 1):
            num += 1
            bag.add(tuple(ids[pos:pos + n]))
    return len(bag) / num if num else 0.0
""",
}
COPIES = {("c1", "c2"), ("c1", "h1"), ("c2", "h1")}


def _reference(gid: str) -> str:
    nb = json.loads((REPO / "solutions" / A / f"{A}.ipynb").read_text())
    src = next(
        "".join(c["source"])
        for c in nb["cells"]
        if c["metadata"].get("nbgrader", {}).get("grade_id") == gid
    )
    return "\n".join(line for line in src.splitlines() if "### " not in line) + "\n"


def _class(root: Path) -> Path:
    """SUBMISSIONS/<student>/03_sampling/03_sampling.ipynb: the released notebook with the students'
    answers."""
    released = json.loads((REPO / "notebooks" / A / f"{A}.ipynb").read_text())
    answers = {
        s: {
            "top_p_filter": SIG["top_p_filter"] + TOP_P[s],
            "distinct_n": SIG["distinct_n"] + DISTINCT[s],
        }
        for s in TOP_P
    }
    for s in ("r1", "r2"):
        answers[s] = {gid: _reference(gid) for gid in SIG}
    answers["u"] = {}
    for student, mine in answers.items():
        nb = copy.deepcopy(released)
        for cell in nb["cells"]:
            gid = cell["metadata"].get("nbgrader", {}).get("grade_id")
            if gid in mine:
                cell["source"] = mine[gid]
        p = root / student / A / f"{A}.ipynb"
        p.parent.mkdir(parents=True)
        p.write_text(json.dumps(nb))
    return root


def _pairs(dest: Path) -> dict[tuple[str, str], float]:
    with open(dest / "similarity.csv", newline="", encoding="utf-8") as f:
        return {
            (uncell(r["student_a"]), uncell(r["student_b"])): float(r["similarity"])
            for r in csv.DictReader(f)
        }


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("sim")
    write_similarity(_class(tmp / "submitted"), tmp / "rep")
    return tmp / "rep"


def test_planted_copies_rank_above_every_honest_pair(report):
    pairs = _pairs(report)
    assert COPIES <= set(pairs), pairs
    honest = {k: v for k, v in pairs.items() if k not in COPIES}
    lowest_copy = min(pairs[k] for k in COPIES)
    assert lowest_copy > max(honest.values(), default=0.0), (
        lowest_copy,
        sorted(honest.items(), key=lambda kv: -kv[1])[:3],
    )
    assert lowest_copy >= 0.5  # a copy shares at least half its fingerprinted code


def test_reference_solution_and_given_code_are_not_shared_code(report):
    """Two students who both wrote the reference solution, or handed in the given code, share
    nothing countable."""
    pairs = _pairs(report)
    assert pairs.get(("r1", "r2"), 0.0) < 0.2
    assert not any("u" in k for k in pairs)


def test_page_marks_shared_code_and_escapes(report, tmp_path):
    page = (report / "similarity.html").read_text()
    assert "<mark>" in page and "No grade is changed" in page
    evil = tmp_path / "subs" / "<b>x" / A
    evil.mkdir(parents=True)
    (evil / f"{A}.ipynb").write_text(
        json.dumps(
            {
                "cells": [
                    {
                        "cell_type": "code",
                        "metadata": {},
                        "source": DISTINCT["h1"] + "# </pre><script>alert(1)</script>",
                    }
                ]
            }
        )
    )
    (tmp_path / "subs" / "other" / A).mkdir(parents=True)
    (tmp_path / "subs" / "other" / A / f"{A}.ipynb").write_text(
        json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "source": DISTINCT["c1"]}]})
    )
    # an assignment folder's name is the student's too
    (tmp_path / "subs" / "other" / "<i>a").mkdir()
    write_similarity(tmp_path / "subs", tmp_path / "rep")
    page = (tmp_path / "rep" / "similarity.html").read_text()
    assert "<script>" not in page and "<b>x" not in page and "&lt;b&gt;x" in page
    assert "<i>a" not in page and "&lt;i&gt;a" in page
    assert "<mark>" in page


def test_command_line_and_unknown_assignment_warning(tmp_path, capsys):
    from autograde.__main__ import main

    subs = tmp_path / "subs"
    for student, code in (("a", DISTINCT["h1"]), ("b", DISTINCT["c2"])):
        (subs / student / "99_unknown").mkdir(parents=True)
        (subs / student / "99_unknown" / "x.ipynb").write_text(
            json.dumps(
                {
                    "cells": [
                        {"cell_type": "code", "metadata": {}, "source": SIG["distinct_n"] + code}
                    ]
                }
            )
        )
    assert main(["similarity", str(subs), str(tmp_path / "rep")]) == 0
    printed = capsys.readouterr().out
    assert "99_unknown: not an assignment of" in printed and "similarity.html" in printed
    assert _pairs(tmp_path / "rep")[("a", "b")] > 0.5
