"""A decoder-only transformer in plain PyTorch: SmolLM2 (Llama architecture) and GPT-2 in one
readable file.

Scope: inference only. One `Transformer` class runs both families; `ModelConfig` says which parts to
use:

| part             | Llama / SmolLM2                       | GPT-2                          |
|------------------|---------------------------------------|--------------------------------|
| positions        | rotary (RoPE), applied to q and k     | learned table added to input   |
| normalisation    | RMSNorm, before each sub-layer        | LayerNorm, before each sub-layer|
| MLP              | SwiGLU: down(silu(gate(x)) * up(x))   | down(gelu(up(x)))              |
| attention heads  | grouped-query: 9 query, 3 key/value   | multi-head: 12 query = 12 kv   |

Everything else (causal self-attention, residual stream, LM head tied to the token embedding) is
shared. The KV cache is an explicit object (`KVCache`) that the caller creates, passes in, and may
inspect; a `Trace` passed to `forward` captures intermediate tensors for the pipeline-trace and
debugging notebooks.

Parameter names follow Hugging Face's Llama checkpoints, so loading (weights.py) is a name-by-name
copy.

References: Vaswani et al. 2017 (transformer); Su et al. 2021 (RoPE); Zhang & Sennrich 2019
(RMSNorm); Shazeer 2020 (SwiGLU); Ainslie et al. 2023 (grouped-query attention); Radford et al. 2019
(GPT-2); karpathy/nanoGPT model.py (layout of this file).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class ModelConfig:
    """Hyper-parameters of a decoder-only transformer; defaults are SmolLM2-135M's."""

    vocab_size: int = 49152  # SmolLM2's BPE vocabulary (17 special tokens at ids 0-16)
    d_model: int = 576  # width of the residual stream
    n_layer: int = 30  # transformer blocks
    n_head: int = 9  # query heads; head_dim = d_model // n_head = 64
    n_kv_head: int = 3  # key/value heads: each is shared by n_head // n_kv_head query heads (GQA)
    d_ff: int = 1536  # hidden width of the MLP
    max_seq_len: int = 8192  # longest context the positions were trained for
    rope_theta: float = 100000.0  # RoPE base; larger = slower-turning angles = longer context
    norm_eps: float = 1e-5  # added inside the norm's square root so an all-zero vector stays finite
    norm: str = "rms"  # "rms" (Llama) or "layer" (GPT-2)
    positions: str = "rope"  # "rope" (rotary, Llama) or "learned" (a table, GPT-2)
    mlp: str = "swiglu"  # "swiglu" (Llama) or "gelu" (GPT-2)
    bias: bool = False  # Llama has no biases in its linear layers; GPT-2 has them everywhere
    bos_token_id: int | None = 1  # <|im_start|> for SmolLM2; the tokenizer never adds it by itself
    eos_token_id: int = 2  # <|im_end|> ends an assistant turn

    @property
    def head_dim(self) -> int:
        """Width of one attention head."""
        return self.d_model // self.n_head

    @staticmethod
    def tiny(**overrides) -> ModelConfig:
        """SmolLM2's architecture at toy size (random weights) for fast tests."""
        base = ModelConfig(
            vocab_size=256, d_model=64, n_layer=2, n_head=4, n_kv_head=2, d_ff=128, max_seq_len=128
        )
        return replace(base, **overrides)

    @staticmethod
    def gpt2_small() -> ModelConfig:
        """GPT-2 124M (Radford et al. 2019)."""
        return ModelConfig(
            vocab_size=50257,
            d_model=768,
            n_layer=12,
            n_head=12,
            n_kv_head=12,
            d_ff=3072,
            max_seq_len=1024,
            norm="layer",
            positions="learned",
            mlp="gelu",
            bias=True,
            bos_token_id=None,
            eos_token_id=50256,
        )

    def __post_init__(self) -> None:
        if self.d_model % self.n_head or self.n_head % self.n_kv_head:
            raise ValueError("d_model must divide by n_head, and n_head by n_kv_head")
        for name, allowed in (
            ("norm", ("rms", "layer")),
            ("positions", ("rope", "learned")),
            ("mlp", ("swiglu", "gelu")),
        ):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")


class KVCache:
    """Keys and values of every layer for the positions seen so far, preallocated up to
    `max_len`."""

    def __init__(
        self, config: ModelConfig, batch_size: int, max_len: int, device=None, dtype=torch.float32
    ):
        shape = (batch_size, config.n_kv_head, max_len, config.head_dim)  # (B, n_kv, S_max, hd)
        self.k = [torch.zeros(shape, device=device, dtype=dtype) for _ in range(config.n_layer)]
        self.v = [torch.zeros(shape, device=device, dtype=dtype) for _ in range(config.n_layer)]
        self.length = 0  # positions filled; the same for every layer between forward calls
        self.max_len = max_len

    def update(
        self, layer: int, k: torch.Tensor, v: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Store this call's k, v (B, n_kv, T, hd) after the cached ones; return all of them."""
        start, end = self.length, self.length + k.shape[2]
        if end > self.max_len:
            raise ValueError(f"KV cache is full: {end} positions needed, max_len={self.max_len}")
        self.k[layer][:, :, start:end] = k
        self.v[layer][:, :, start:end] = v
        return self.k[layer][:, :, :end], self.v[layer][:, :, :end]

    def nbytes(self) -> int:
        """Memory held by the cache (both k and v, all layers, full max_len)."""
        return sum(t.numel() * t.element_size() for t in self.k + self.v)


@dataclass
class Trace:
    """Ask `forward` to keep intermediate tensors; the fields are filled in during the call."""

    # layers whose attention weights to keep (costs a second attention)
    attn_layers: tuple[int, ...] = ()
    embeddings: torch.Tensor | None = None  # (B, T, D) input to block 0
    blocks: list[torch.Tensor] = field(default_factory=list)  # output of each block, (B, T, D)
    final_norm: torch.Tensor | None = None  # (B, T, D) what the LM head reads
    logits: torch.Tensor | None = None  # (B, T, V)
    # layer -> (B, n_head, T, S) weights
    attn: dict[int, torch.Tensor] = field(default_factory=dict)


class RMSNorm(nn.Module):
    """x / rms(x) * weight: LayerNorm without the mean subtraction and the bias."""

    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Normalise in float32: the mean of squares loses precision in bf16.
        x32 = x.float()
        return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)).to(
            x.dtype
        ) * self.weight


def make_norm(config: ModelConfig) -> nn.Module:
    """The normalisation layer the config asks for."""
    if config.norm == "rms":
        return RMSNorm(config.d_model, config.norm_eps)
    return nn.LayerNorm(config.d_model, eps=config.norm_eps)


def rope_angles(
    positions: torch.Tensor, head_dim: int, theta: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of position * frequency, (B, T, head_dim), in Hugging Face's rotate-half
    layout."""
    inv_freq = 1.0 / theta ** (
        torch.arange(0, head_dim, 2, device=positions.device, dtype=torch.float32) / head_dim
    )
    angles = positions.float()[..., None] * inv_freq  # (B, T, hd/2)
    angles = torch.cat([angles, angles], dim=-1)  # (B, T, hd): pair i with i + hd/2
    return angles.cos(), angles.sin()


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate each (x_i, x_{i+hd/2}) pair of x (B, h, T, hd) by its position's angle."""
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos[:, None].to(x.dtype) + rotated * sin[:, None].to(x.dtype)


class Attention(nn.Module):
    """Causal self-attention with grouped-query heads, optional RoPE and an optional KV cache."""

    def __init__(self, config: ModelConfig, layer: int):
        super().__init__()
        self.config, self.layer = config, layer
        hd, b = config.head_dim, config.bias
        self.q_proj = nn.Linear(config.d_model, config.n_head * hd, bias=b)
        self.k_proj = nn.Linear(config.d_model, config.n_kv_head * hd, bias=b)
        self.v_proj = nn.Linear(config.d_model, config.n_kv_head * hd, bias=b)
        self.o_proj = nn.Linear(config.n_head * hd, config.d_model, bias=b)

    def forward(self, x, rope, mask, cache: KVCache | None, trace: Trace | None) -> torch.Tensor:
        cfg = self.config
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, cfg.n_head, cfg.head_dim).transpose(1, 2)  # (B, nh, T, hd)
        # (B, nkv, T, hd)
        k = self.k_proj(x).view(B, T, cfg.n_kv_head, cfg.head_dim).transpose(1, 2)
        # (B, nkv, T, hd)
        v = self.v_proj(x).view(B, T, cfg.n_kv_head, cfg.head_dim).transpose(1, 2)
        if rope is not None:
            q, k = apply_rope(q, *rope), apply_rope(k, *rope)
        if cache is not None:
            k, v = cache.update(self.layer, k, v)  # (B, nkv, S, hd), S = cached + T
        # Grouped-query attention: each group of n_head / n_kv_head query heads reads the same
        # key/value head. Folding a group's queries into the query axis lets them share that head
        # without copying it.
        group, S = cfg.n_head // cfg.n_kv_head, k.shape[2]
        q = q.reshape(B, cfg.n_kv_head, group * T, cfg.head_dim)  # (B, nkv, group * T, hd)
        if mask is not None:
            # (B or 1, 1, group * T, S): the same rows for every query head
            mask = mask.repeat(1, 1, group, 1)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # (B, nkv, group * T, hd)
        if trace is not None and self.layer in trace.attn_layers:
            # With the identity as values, attention returns its own weights: row i is query i's
            # distribution.
            eye = torch.eye(S, dtype=q.dtype, device=q.device).expand(B, cfg.n_kv_head, S, S)
            trace.attn[self.layer] = F.scaled_dot_product_attention(
                q, k, eye, attn_mask=mask
            ).reshape(B, cfg.n_head, T, S)
        y = y.reshape(B, cfg.n_head, T, cfg.head_dim)
        return self.o_proj(y.transpose(1, 2).reshape(B, T, cfg.n_head * cfg.head_dim))


class MLP(nn.Module):
    """Position-wise feed-forward network: SwiGLU (Llama) or GELU (GPT-2)."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.swiglu = config.mlp == "swiglu"
        if self.swiglu:
            self.gate_proj = nn.Linear(config.d_model, config.d_ff, bias=config.bias)
        self.up_proj = nn.Linear(config.d_model, config.d_ff, bias=config.bias)
        self.down_proj = nn.Linear(config.d_ff, config.d_model, bias=config.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.swiglu:
            return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))
        return self.down_proj(F.gelu(self.up_proj(x), approximate="tanh"))


class Block(nn.Module):
    """Pre-norm transformer block: x + attn(norm(x)), then x + mlp(norm(x))."""

    def __init__(self, config: ModelConfig, layer: int):
        super().__init__()
        self.input_layernorm = make_norm(config)
        self.self_attn = Attention(config, layer)
        self.post_attention_layernorm = make_norm(config)
        self.mlp = MLP(config)

    def forward(self, x, rope, mask, cache, trace) -> torch.Tensor:
        x = x + self.self_attn(self.input_layernorm(x), rope, mask, cache, trace)
        return x + self.mlp(self.post_attention_layernorm(x))


class Transformer(nn.Module):
    """Token ids in, next-token logits out: embed, run the blocks, normalise, project onto the
    vocabulary."""

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        self.embed_tokens = nn.Embedding(config.vocab_size, config.d_model)
        if config.positions == "learned":
            self.embed_positions = nn.Embedding(config.max_seq_len, config.d_model)
        self.layers = nn.ModuleList(Block(config, i) for i in range(config.n_layer))
        self.norm = make_norm(config)
        # The LM head is the token embedding itself (tied weights): logits = h @
        # embed_tokens.weight.T set only by course_lib.lowbit: the same weights, stored low-bit
        self.lm_head: nn.Module | None = None

    def new_cache(self, batch_size: int = 1, max_len: int | None = None) -> KVCache:
        """An empty KV cache on this model's device and dtype."""
        p = self.embed_tokens.weight
        return KVCache(
            self.config,
            batch_size,
            max_len or self.config.max_seq_len,
            device=p.device,
            dtype=p.dtype,
        )

    @torch.no_grad()
    def forward(
        self,
        idx: torch.Tensor,
        cache: KVCache | None = None,
        attention_mask: torch.Tensor | None = None,
        trace: Trace | None = None,
    ) -> torch.Tensor:
        """Logits (B, T, V) in float32 for ids (B, T); with a cache, idx holds only the new
        positions.

        attention_mask (B, S) marks real tokens with 1 and padding with 0 for every position the
        model sees (cached + new, S = cache.length + T); left padding lets prompts of different
        lengths share a batch.
        """
        cfg = self.config
        B, T = idx.shape
        past = cache.length if cache is not None else 0
        S = past + T
        if S > cfg.max_seq_len:
            raise ValueError(
                f"sequence of {S} tokens is longer than the model's context ({cfg.max_seq_len})"
            )
        if attention_mask is not None:
            if attention_mask.shape != (B, S):
                raise ValueError(
                    f"attention_mask must be (batch, cached + new) = {(B, S)}, got "
                    f"{tuple(attention_mask.shape)}"
                )
            # Padding does not advance the position: a row's first real token is position 0.
            positions = (attention_mask.long().cumsum(-1) - 1).clamp(min=0)[:, past:]  # (B, T)
        else:
            positions = torch.arange(past, S, device=idx.device).expand(B, T)  # (B, T)

        # Query i (absolute position past + i) may read keys 0 .. past + i, and no padding.
        mask = None
        if T > 1 or attention_mask is not None:
            key_pos, query_pos = (
                torch.arange(S, device=idx.device),
                torch.arange(past, S, device=idx.device),
            )
            mask = (key_pos <= query_pos[:, None])[None, None]  # (1, 1, T, S)
            if attention_mask is not None:
                mask = mask & attention_mask.bool()[:, None, None, :]  # (B, 1, T, S)
                # A padding query row would see nothing and softmax to NaN; let it see itself
                # instead.
                diagonal = key_pos == query_pos[:, None]
                mask = mask | diagonal[None, None]  # (B, 1, T, S)

        x = self.embed_tokens(idx)  # (B, T, D)
        rope = None
        if cfg.positions == "learned":
            x = x + self.embed_positions(positions)
        else:
            rope = rope_angles(positions, cfg.head_dim, cfg.rope_theta)
        if trace is not None:
            trace.embeddings = x
        for block in self.layers:
            x = block(x, rope, mask, cache, trace)
            if trace is not None:
                trace.blocks.append(x)
        if cache is not None:
            cache.length = S
        x = self.norm(x)
        # (B, T, V)
        logits = (
            x @ self.embed_tokens.weight.T if self.lm_head is None else self.lm_head(x)
        ).float()
        if trace is not None:
            trace.final_norm, trace.logits = x, logits
        return logits
