"""The model: equal to Hugging Face transformers on the same weights, cache == no cache, traces,
padding.

Oracle: transformers (test-only) loading the same GGUF file itself, with its own dequantization and
its own un-permutation of the Q/K weights; and, for GPT-2 and Llama hub checkpoints, tiny random
models that transformers writes in the hub's format.
"""

from __future__ import annotations

import _real
import pytest
import torch

from course_lib.model import KVCache, ModelConfig, Trace, Transformer
from course_lib.weights import fetch

PROMPTS = ["The capital of France is", "def fibonacci(n):\n    ", "Once upon a time, 3 little pigs"]


@pytest.fixture(scope="module")
def ours():
    return _real.model()


@pytest.fixture(scope="module")
def tok():
    return _real.tokenizer()


@pytest.fixture(scope="module")
def hf_model():
    # test-only oracle; installed by the test setup
    transformers = pytest.importorskip("transformers")
    path = fetch(progress=False)
    model = transformers.AutoModelForCausalLM.from_pretrained(
        str(path.parent), gguf_file=path.name, torch_dtype=torch.float32
    )
    return model.eval()


def test_logits_equal_transformers_on_the_same_gguf(ours, tok, hf_model):
    for prompt in PROMPTS:
        ids = torch.tensor([tok.encode(prompt)])
        with torch.no_grad():
            expected = hf_model(ids).logits
        got = ours(ids)
        torch.testing.assert_close(got, expected, atol=1e-3, rtol=0)


def test_greedy_tokens_equal_transformers(ours, tok, hf_model):
    ids = torch.tensor([tok.encode("The capital of France is")])
    with torch.no_grad():
        expected = hf_model.generate(ids, max_new_tokens=12, do_sample=False)[
            0, ids.shape[1] :
        ].tolist()
    out = ids[0].tolist()
    for _ in range(12):
        out.append(int(ours(torch.tensor([out]))[0, -1].argmax()))
    assert out[ids.shape[1] :] == expected


def test_the_model_knows_paris(ours, tok):
    ids = tok.encode("The capital of France is")
    out = list(ids)
    for _ in range(3):
        out.append(int(ours(torch.tensor([out]))[0, -1].argmax()))
    assert tok.decode(out[len(ids) :]).startswith(" Paris")


def test_cached_decoding_equals_recomputing_everything(ours, tok):
    prompt = tok.encode("Once upon a time,")
    cache = ours.new_cache(batch_size=1, max_len=64)
    logits = ours(torch.tensor([prompt]), cache=cache)
    cached, full = list(prompt), list(prompt)
    for _ in range(24):
        cached.append(int(logits[0, -1].argmax()))
        logits = ours(torch.tensor([[cached[-1]]]), cache=cache)
        reference = ours(torch.tensor([full]))
        full.append(int(reference[0, -1].argmax()))
        torch.testing.assert_close(
            logits[0, -1], ours(torch.tensor([cached]))[0, -1], atol=1e-4, rtol=0
        )
    assert cached == full
    assert cache.length == len(cached)


def test_trace_captures_every_stage_without_changing_the_logits(ours, tok):
    ids = torch.tensor([tok.encode("The capital of France is")])
    trace = Trace(attn_layers=(0, 29))
    logits = ours(ids, trace=trace)
    B, T, D = 1, ids.shape[1], ours.config.d_model
    assert trace.embeddings.shape == (B, T, D)
    torch.testing.assert_close(trace.embeddings, ours.embed_tokens.weight[ids])
    assert len(trace.blocks) == 30 and all(b.shape == (B, T, D) for b in trace.blocks)
    torch.testing.assert_close(trace.logits, logits)
    torch.testing.assert_close(trace.final_norm @ ours.embed_tokens.weight.T, logits)
    torch.testing.assert_close(logits, ours(ids), atol=1e-4, rtol=0)
    for layer in (0, 29):
        w = trace.attn[layer]
        assert w.shape == (B, 9, T, T)
        torch.testing.assert_close(w.sum(-1), torch.ones(B, 9, T))
        assert torch.all(w.triu(diagonal=1) == 0), "position i attended to a later position"


def test_left_padding_with_a_mask_gives_each_rows_own_logits(ours, tok):
    short, long = tok.encode("Hello"), tok.encode("The capital of France is")
    pad = len(long) - len(short)
    ids = torch.tensor([[0] * pad + short, long])
    mask = torch.tensor([[0] * pad + [1] * len(short), [1] * len(long)])
    batch = ours(ids, attention_mask=mask)
    torch.testing.assert_close(batch[0, pad:], ours(torch.tensor([short]))[0], atol=1e-4, rtol=0)
    torch.testing.assert_close(batch[1], ours(torch.tensor([long]))[0], atol=1e-4, rtol=0)


def test_padded_batch_with_cache_matches_single_rows():
    """A logical identity (padding masked, cache positions shifted), so checked with float64
    weights: the matrix products' summation-order noise is then ~1e-15 relative, far below the one
    float32 rounding of the returned logits, so both paths round to the same float32 value (a
    masking or position bug moves logits by O(0.1)). With float32 weights the noise (~1e-6 here)
    depends on how a loaded machine splits the work across threads, and a fixed atol of 1e-5 once
    failed by 1.4e-6. Allowed: one float32 rounding step (rtol = eps32)."""
    torch.manual_seed(0)
    model = Transformer(ModelConfig.tiny()).eval().double()
    a, b = [5, 6, 7, 8, 9], [10, 11]
    ids = torch.tensor([a, [0, 0, 0] + b])
    mask = torch.tensor([[1] * 5, [0, 0, 0, 1, 1]])
    cache = model.new_cache(batch_size=2, max_len=16)
    model(ids, cache=cache, attention_mask=mask)
    step = torch.tensor([[3], [4]])
    mask = torch.cat([mask, torch.ones(2, 1, dtype=torch.long)], dim=1)
    got = model(step, cache=cache, attention_mask=mask)[:, -1]
    eps32 = torch.finfo(torch.float32).eps
    torch.testing.assert_close(got[0], model(torch.tensor([a + [3]]))[0, -1], atol=0, rtol=eps32)
    torch.testing.assert_close(got[1], model(torch.tensor([b + [4]]))[0, -1], atol=0, rtol=eps32)


def test_output_at_position_i_ignores_later_tokens():
    torch.manual_seed(0)
    model = Transformer(ModelConfig.tiny()).eval()
    x = torch.randint(0, 256, (1, 12))
    y = x.clone()
    y[0, 7:] = torch.randint(0, 256, (5,))
    torch.testing.assert_close(model(x)[0, :7], model(y)[0, :7])


def test_cache_refuses_to_overflow():
    model = Transformer(ModelConfig.tiny()).eval()
    cache = model.new_cache(batch_size=1, max_len=4)
    model(torch.zeros(1, 4, dtype=torch.long), cache=cache)
    with pytest.raises(ValueError, match="KV cache is full"):
        model(torch.zeros(1, 1, dtype=torch.long), cache=cache)


def test_cache_memory_is_the_textbook_formula():
    cfg = ModelConfig()
    cache = KVCache(cfg, batch_size=1, max_len=1000, dtype=torch.float16)
    # 2 (k and v) x layers x kv_heads x head_dim x tokens x bytes
    assert cache.nbytes() == 2 * 30 * 3 * 64 * 1000 * 2


def test_config_rejects_nonsense():
    with pytest.raises(ValueError, match="n_head"):
        ModelConfig(d_model=100, n_head=3)
    with pytest.raises(ValueError, match="norm"):
        ModelConfig(norm="batch")


def test_parameter_count_is_smollm2_135m(ours):
    V, D, F, L, kv = 49152, 576, 1536, 30, 3 * 64
    per_block = D * D + 2 * D * kv + D * D + 3 * D * F + 2 * D  # q, k+v, o, gate/up/down, two norms
    # the "135M"
    assert sum(p.numel() for p in ours.parameters()) == V * D + L * per_block + D == 134_515_008
