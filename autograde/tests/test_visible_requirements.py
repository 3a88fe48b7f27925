"""Visible points need an answer that meets every requirement the exercise text states.

Policy (docs/threat-model.md, "Visible points need an answer that computes"): a visible check's
points never depend on the same exercise's hidden check (that would charge an honest edge-case bug
twice and tell the student what the hidden cases hold). Instead the visible cases cover each
requirement of the text (long sequences, far repeats, overflow, the exact T = 0, float64 accuracy
for float64 inputs), so a partial answer fails a visible case it can read. The partial answers below
(bug zoo) passed the visible checks of 02 and 05 when every visible case was short; each must now
fail the named visible case. Control: the reference solution passes the same check (selfcheck
asserts it too).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autograde.course import Course
from autograde.references import grading_env, reference_namespace
from course_lib.checks.engine import evaluate

PARTIAL = [  # (assignment, bug-zoo entry, a label fragment of the visible case that must catch it)
    ("02_logits_softmax", "softmax__mean_centred", "[500, -500]"),
    ("02_logits_softmax", "probs_at_temperature__t_clamped_to_1e-3", "near tie [3, 3.00001, -1]"),
    ("02_logits_softmax", "sequence_logprob__first_16_tokens_only", "40 tokens"),
    ("02_logits_softmax", "perplexity__first_16_tokens_only", "40 tokens"),
    ("05_debugging_generation", "ban_repeated_ngrams__last_16_ids_only", "25 ids back"),
    ("05_debugging_generation", "find_cycle__periods_up_to_4_only", ""),
    ("05_debugging_generation", "repetition_penalty__last_12_ids_only", ""),
    ("05_debugging_generation", "presence_frequency_penalty__counts_capped_at_3", ""),
    ("05_debugging_generation", "repetition_rate__lookback_of_3_ngrams", ""),
    ("05_debugging_generation", "find_cycle__last_28_ids_only", "80 times"),
    ("03_sampling", "top_p_filter__long_rows_unfiltered", "100 tokens"),
    # the texts promise float64 accuracy for float64 inputs (these compute in float32)
    ("04_generation_loop", "attend_with_cache__float32_inside", "float64 inputs: float64 accuracy"),
    (
        "05_debugging_generation",
        "repetition_penalty__float32_inside",
        "float64 logits keep float64",
    ),
    (
        "05_debugging_generation",
        "presence_frequency_penalty__float32_inside",
        "float64 logits keep float64",
    ),
    # issue 35, fair checks: each rule the text states is enforced by the visible check too
    ("02_logits_softmax", "sequence_logprob__autograd_on", "refuses to run with gradients on"),
    ("02_logits_softmax", "sequence_logprob__one_pass_per_prefix", "one pass over the whole text"),
    ("02_logits_softmax", "probs_at_temperature__float32_at_T0", "float64 logits at T=0"),
    ("05_debugging_generation", "presence_frequency_penalty__python_loop_over_history", "cost:"),
    # white-box red team 25, E4: 03's "No Python loop over tokens", counted in lines
    ("03_sampling", "penalize_repeats__python_loop_over_history", "cost:"),
    # white-box red team 25, E3: the ratio alone is met by padding; the 40,000-id case's cap is not
    (
        "05_debugging_generation",
        "presence_frequency_penalty__padded_history_loop",
        "two rows of 20000 ids",
    ),
    (
        "05_debugging_generation",
        "presence_frequency_penalty__computed_in_input_dtype",
        "rounded once",
    ),
    (
        "05_debugging_generation",
        "presence_frequency_penalty__counts_in_logits_dtype",
        "seen 257 times",
    ),
    ("05_debugging_generation", "find_cycle__most_tokens", "periods 1 and 5"),
    ("05_debugging_generation", "repetition_penalty__vocab_loop_on_cpu", "cost: V = 5000"),
    ("05_debugging_generation", "repetition_penalty__padded_vocab_loop", "cost: V = 49152"),
    ("03_sampling", "min_p_filter__logit_form_rounded_threshold", "compared as probabilities"),
    ("03_sampling", "min_p_filter__strict_except_top", "exactly min_p * p_max"),
    ("03_sampling", "process_logits__top_k_zero_is_off", "top_k=0 is a setting"),
    ("03_sampling", "penalize_repeats__penalty_zero_accepted", "penalty 0 must raise"),
    ("03_sampling", "distinct_n__n0_not_rejected", "n=0 must raise"),
    ("03_sampling", "top_k_filter__float_k_accepted", "k=2.5"),
]


def _notebook_of(course: Course, assignment: str, exercise: str) -> Path:
    for nb in course.source_notebooks(assignment):
        if f"def {exercise}(" in nb.read_text():
            return nb
    raise LookupError(exercise)


@pytest.mark.parametrize("assignment, entry, label", PARTIAL, ids=[e for _, e, _ in PARTIAL])
def test_a_partial_answer_fails_a_visible_case_it_can_read(assignment, entry, label):
    course = Course()
    path = course.zoo_dir / assignment / f"{entry}.py"
    source = path.read_text()
    target = next(
        line.split('"')[1] for line in source.splitlines() if line.startswith("TARGET = ")
    )
    nb = _notebook_of(course, assignment, target)
    ns = reference_namespace(course, nb)
    check = course.visible_registry().get(target)
    with grading_env(nb.parent, course.path_entries()):
        honest = evaluate(
            check, ns[target], [c.expected for c in check.cases()], raise_on_fail=False, quiet=True
        )
        assert honest.passed, (
            f"control: the reference fails its own visible check:\n{honest.message}"
        )
        bug_ns = dict(ns)
        exec(compile(source, str(path), "exec"), bug_ns)
        r = evaluate(
            check,
            bug_ns[target],
            [c.expected for c in check.cases()],
            raise_on_fail=False,
            quiet=True,
        )
    assert not r.passed, f"{entry} passes the visible check of {target}"
    assert any(label in case for case, _ in r.failures), [case for case, _ in r.failures]


def test_a_failure_caused_by_another_exercise_names_it_first(monkeypatch):
    """Issue 35: perplexity failing because the student's sequence_logprob is wrong says so first; a
    perplexity that does not call it, or calls a right one, does not."""
    import math

    import torch

    from course_lib.checks import CheckFailed, check

    monkeypatch.delenv("COURSE_GRADING", raising=False)
    ns = {"torch": torch, "math": math}
    exec(
        compile(
            """
def sequence_logprob(model, tok, text):
    ids = tok.encode(text)
    if len(ids) < 2:
        raise ValueError(text)
    idx = torch.tensor([ids], device=next(model.parameters()).device)
    with torch.no_grad():
        logp = torch.log_softmax(model(idx)[0].float(), -1)
    return float(logp[1:].gather(-1, idx[0, 1:, None]).sum())     # off by one: row t scores token t

def perplexity(model, tok, text):
    return math.exp(-sequence_logprob(model, tok, text) / (len(tok.encode(text)) - 1))

def perplexity_alone(model, tok, text):
    return 1.0
""",
            "<notebook>",
            "exec",
        ),
        ns,
    )
    with pytest.raises(CheckFailed) as caused:
        check("perplexity", ns["perplexity"])
    assert str(caused.value).startswith(
        "perplexity calls your sequence_logprob, which fails its own check"
    )
    with pytest.raises(CheckFailed) as alone:
        check("perplexity", ns["perplexity_alone"])
    assert str(alone.value).startswith("perplexity: ") and "calls your" not in str(alone.value)
    # grading: the grader writes its own page
    monkeypatch.setenv("COURSE_GRADING", "1")
    with pytest.raises(CheckFailed) as graded:
        check("perplexity", ns["perplexity"])
    assert str(graded.value).startswith("perplexity: ")


def test_check_all_names_the_failing_exercise_a_failure_comes_from():
    import math

    import torch

    from course_lib.checks import FAILED, check_all

    ns = {"torch": torch, "math": math}
    exec(
        compile(
            """
def sequence_logprob(model, tok, text):
    if len(tok.encode(text)) < 2:
        raise ValueError(text)
    return -1.0 * (len(tok.encode(text)) - 1)                       # every token scored log p = -1

def perplexity(model, tok, text):
    return math.exp(-sequence_logprob(model, tok, text) / (len(tok.encode(text)) - 1))
""",
            "<notebook>",
            "exec",
        ),
        ns,
    )
    rows = {r.name: r for r in check_all(ns, "02_logits_softmax", show=False)}
    assert (
        rows["sequence_logprob"].status == FAILED
        and "calls your" not in rows["sequence_logprob"].detail
    )
    assert rows["perplexity"].status == FAILED
    assert rows["perplexity"].detail.startswith(
        "calls your sequence_logprob, which fails its own check"
    )
