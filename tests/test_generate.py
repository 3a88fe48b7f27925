"""Tests of course_lib.generate: the loop agrees with a naive recompute-everything loop written
here, with and without KV cache, alone and in padded batches; stops where it should; plain sampling
follows softmax.

Cost: ~2 s on 2 CPU cores for the tiny random model, plus ~6 s for the `model` test (loads SmolLM2).
"""

from __future__ import annotations

import math

import pytest
import torch

from course_lib.generate import generate, greedy, multinomial, stream
from course_lib.model import ModelConfig, Transformer


@pytest.fixture(scope="module")
def tiny() -> Transformer:
    """A random model of SmolLM2's architecture at toy size (seeded, so every run sees the same
    weights)."""
    torch.manual_seed(0)
    return Transformer(ModelConfig.tiny()).eval()


def naive_greedy(
    model: Transformer, prompt: list[int], n: int, stops: set[int] = frozenset()
) -> list[int]:
    """Reference loop: no cache, no batch, no mask; re-run the whole sequence for every token."""
    seq, out = list(prompt), []
    with torch.no_grad():
        for _ in range(n):
            token = int(model(torch.tensor([seq]))[0, -1].argmax())
            if token in stops:
                break
            out.append(token)
            seq.append(token)
    return out


PROMPTS = [[5, 17, 99], [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5], [200, 201, 202, 203, 7, 8, 9]]


@pytest.mark.parametrize("use_cache", [True, False])
def test_single_prompt_matches_naive_loop(tiny, use_cache):
    for prompt in PROMPTS:
        expected = naive_greedy(tiny, prompt, 24)
        assert generate(tiny, [prompt], 24, stop_tokens=(), use_cache=use_cache) == [expected]


def test_cached_equals_uncached_token_for_token(tiny):
    cached = generate(tiny, PROMPTS, 40, stop_tokens=(), use_cache=True)
    uncached = generate(tiny, PROMPTS, 40, stop_tokens=(), use_cache=False)
    assert cached == uncached
    assert all(len(row) == 40 for row in cached)


@pytest.mark.parametrize("use_cache", [True, False])
def test_batch_of_different_lengths_equals_each_alone(tiny, use_cache):
    batch = generate(tiny, PROMPTS, 24, stop_tokens=(), use_cache=use_cache)
    alone = [naive_greedy(tiny, p, 24) for p in PROMPTS]
    assert batch == alone


def test_stops_at_stop_token_and_leaves_it_out(tiny):
    free = naive_greedy(tiny, PROMPTS[0], 30)
    stop = free[5]  # a token this prompt produces; the row must end at its first occurrence
    expected = free[: free.index(stop)]
    assert generate(tiny, [PROMPTS[0]], 30, stop_tokens=(stop,)) == [expected]
    assert list(stream(tiny, PROMPTS[0], 30, stop_tokens=(stop,))) == expected


def test_rows_stop_independently_in_a_batch(tiny):
    free = naive_greedy(tiny, PROMPTS[1], 30)
    stop = free[3]
    got = generate(tiny, PROMPTS, 30, stop_tokens=(stop,))
    assert got == [naive_greedy(tiny, p, 30, stops={stop}) for p in PROMPTS]
    assert len(got[1]) == free.index(stop)


def test_default_stop_token_is_the_models_eos(tiny):
    free = naive_greedy(tiny, PROMPTS[2], 30)
    eos = free[4]
    model = Transformer(ModelConfig.tiny(eos_token_id=eos)).eval()
    model.load_state_dict(tiny.state_dict())
    assert generate(model, [PROMPTS[2]], 30) == [free[: free.index(eos)]]


def test_stream_yields_what_generate_returns(tiny):
    streamed = stream(tiny, PROMPTS[1], 20, stop_tokens=())
    first = next(streamed)  # available before the rest is computed
    assert [first, *streamed] == generate(tiny, [PROMPTS[1]], 20, stop_tokens=())[0]


def test_zero_new_tokens_and_bad_inputs(tiny):
    assert generate(tiny, PROMPTS, 0) == [[], [], []]
    with pytest.raises(ValueError, match="at least one token"):
        generate(tiny, [[1, 2], []], 4)
    with pytest.raises(TypeError, match="squeeze"):
        generate(tiny, PROMPTS, 4, step=lambda logits: logits.argmax(-1, keepdim=True))  # (B, 1)
    with pytest.raises(TypeError, match="integer token id"):
        generate(tiny, PROMPTS, 4, step=lambda logits: torch.softmax(logits, -1)[:, 0])  # floats


def test_progress_bar_when_asked(tiny, capsys):
    generate(tiny, PROMPTS[:1], 5, stop_tokens=(), progress=True)
    assert "generating" in capsys.readouterr().err
    generate(tiny, PROMPTS[:1], 5, stop_tokens=(), progress=False)
    assert capsys.readouterr().err == ""


def test_generator_makes_sampling_reproducible(tiny):
    def uniform(logits, generator=None):  # the random tiny model is too peaked to tell seeds apart
        return multinomial(torch.zeros_like(logits), generator=generator)

    def run(seed: int) -> list[list[int]]:
        return generate(
            tiny,
            PROMPTS,
            20,
            step=uniform,
            stop_tokens=(),
            generator=torch.Generator().manual_seed(seed),
        )

    assert run(1) == run(1)
    # 60 uniform draws over 256 ids agree by chance with probability 256**-60
    assert run(1) != run(2)


def test_greedy_is_argmax_with_lowest_index_on_ties():
    logits = torch.tensor([[0.0, 3.0, 3.0, -1.0], [5.0, 1.0, 5.0, 5.0]])
    assert greedy(logits).tolist() == [1, 0]


def chi2_sf_df4(x: float) -> float:
    """P(X >= x) for a chi-square variable with 4 degrees of freedom: exp(-x/2) (1 + x/2), exact."""
    return math.exp(-x / 2) * (1 + x / 2)


def test_multinomial_follows_softmax_chi_square():
    """Pearson's chi-square over 5 outcomes (4 dof). A correct sampler fails with probability
    1e-6."""
    logits = torch.tensor([2.0, 1.0, 0.0, -1.0, 0.5])
    n = 200_000
    g = torch.Generator().manual_seed(1234)
    draws = multinomial(logits.expand(n, -1), generator=g)  # one draw per row: n draws
    assert draws.shape == (n,) and draws.dtype == torch.long
    counts = torch.bincount(draws, minlength=5).double()
    # exact softmax, independent of the sampler
    expected = n * torch.softmax(logits.double(), dim=0)
    stat = float(((counts - expected) ** 2 / expected).sum())
    assert chi2_sf_df4(stat) > 1e-6, (
        f"chi-square {stat:.1f}: counts {counts.tolist()} vs {expected.tolist()}"
    )


def test_multinomial_never_picks_masked_tokens():
    logits = torch.tensor([[0.0, float("-inf"), 1.0, float("-inf")]]).expand(10_000, -1)
    assert set(multinomial(logits, generator=torch.Generator().manual_seed(0)).tolist()) <= {0, 2}


def test_chi_square_helper_matches_known_quantiles():
    # Published table values (e.g. NIST/SEMATECH): chi2(4) upper 5 % point 9.488, upper 0.1 % point
    # 18.467.
    assert chi2_sf_df4(9.488) == pytest.approx(0.05, abs=1e-4)
    assert chi2_sf_df4(18.467) == pytest.approx(0.001, abs=1e-5)


@pytest.mark.gpu
def test_generate_on_gpu_matches_cpu(tiny):
    """Needs CUDA; skipped on CI, which has no GPU."""
    gpu = Transformer(ModelConfig.tiny()).cuda().eval()
    gpu.load_state_dict(tiny.state_dict())
    assert generate(gpu, PROMPTS, 16, stop_tokens=()) == generate(tiny, PROMPTS, 16, stop_tokens=())
    assert generate(gpu, PROMPTS, 16, stop_tokens=(), use_cache=False) == generate(
        gpu, PROMPTS, 16, stop_tokens=()
    )


@pytest.mark.model
def test_real_model_says_paris(real_model):
    model, tok = real_model
    out = generate(model, [tok.encode("The capital of France is")], 6)
    assert tok.decode(out[0]).startswith(" Paris"), tok.decode(out[0])
