"""Low-bit decode: the model file's own 4-bit and 8-bit weights, multiplied without unpacking them
to float32.

Why it pays: decoding one token multiplies one vector by every weight matrix, about 2 flops per
weight read, so a decode step is limited by how fast memory delivers the weights, not by arithmetic.
The file stores the 210 linear weights as Q4_1 (32 weights share a float16 scale d and minimum m: 20
bytes per 32 weights) and the tied embedding / LM head as Q8_0 (a float16 scale per 32 int8 weights:
34 bytes per 32). Dequantized to float32 they take 6.4x and 3.8x those bytes; here they stay packed
and torch's weight-only kernels unpack them in registers, next to the multiply.

`load_model(weights=...)` picks a path; the Transformer stays the same readable model, only its
linear layers (and the LM head) are swapped for the small modules below:

| weights | linear layers                                         | LM head (tied embedding)
|
|---------|-------------------------------------------------------|------------------------------------------------|
| "fp32"  | nn.Linear, dequantized float32 (default, inspectable) | embedding.T in float32
|
| "fp16"  | `F16Linear`: weights rounded to float16               | `F16Linear` the same way
|
| "q8"    | `Q8Linear`: requantized to int8, one scale per row    | `Q8Linear` the same way
|
| "q4"    | `Q4Linear.from_q4_1`: the file's Q4_1 blocks as such  | `Q4Linear.from_q8_0`: Q8_0 as
two 4-bit halves |
| "q4f16" | `Q4Linear.from_q4_1`, as "q4"                         | `F16Linear`: float32 logits, as
"fp16"         |

Measured (torch 2.13.0+cpu, this CPU, one thread): torch's int4 / int8 kernels are fast only with
bfloat16 activations and scales (1536x576 int4: 0.057 ms in bf16, 1.7 ms in float32, where a float32
nn.Linear takes
0.10 ms), so `Q4Linear` and `Q8Linear` round their input, scales and output to bfloat16 (relative
2^-8 each) and return float32. With float32 `compute_dtype` (tests only) `Q4Linear` reproduces the
file's weights bit for bit; in bfloat16 the logits move by ~1 and greedy text drifts from fp32's
after a few dozen tokens. `F16Linear` (fbgemm's float16-weight kernel) keeps float32 activations and
accumulation: weights move by at most 2^-11 relative, logits by ~0.03, and greedy tokens stay those
of fp32 (tests/test_lowbit.py). So: "fp16" for text identical to fp32, "q4" for the fewest bytes per
token. "q4f16" exists because of how its quality was measured (benchmarks/quality.py, llama.cpp's
teacher-forced KL divergence and top-1 agreement): a bfloat16 LM head rounds logits of ~15-20 to
steps of 0.06-0.125, so near-ties become exact ties that argmax breaks toward the lower id; every
top-1 disagreement of "q4" on a 256-token sample was such a tie. Its float32-output head removes
them for 57 MB more per token than "q4"'s head.

The embedding lookup (one row per token) stays float32: it reads 2 kB per token, not 113 MB.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from .weights import Checkpoint, QuantizedBlocks

__all__ = [
    "DEMO_WEIGHTS",
    "GROUP",
    "F16Linear",
    "Q4Linear",
    "Q8Linear",
    "WEIGHTS",
    "demo_weights",
    "quantize_model",
]

GROUP = 32  # weights per Q4_1 / Q8_0 block = per group of the int4 kernel
WEIGHTS = ("fp32", "fp16", "q8", "q4", "q4f16")  # the paths load_model(weights=...) accepts
# the only activation dtype torch's CPU low-bit kernels run fast in (see above)
COMPUTE_DTYPE = torch.bfloat16
# The notebooks' demonstrations whose lesson is not about exact values run on this path (issue 35,
# item 2): of the paths that meet llama.cpp's bar against fp32 (top-1 agreement >= 99 %, mean KLD <=
# 0.01 nats), "fp16" (99.83 %, 2e-6 nats) and "q4f16" (99.13 %, 0.0002); for the notebooks' batched
# runs (2-18 rows) "fp16" decodes as fast as "q4f16" or faster, and it keeps fp32's text on most
# prompts (docs/benchmarks.md, "Pace, issue 35").
DEMO_WEIGHTS = "fp16"


def _check_device(device: torch.device | str | None, weights: str) -> None:
    """Low-bit paths exist on the CPU (all of them) and on CUDA ("q4" only); refuse the rest by
    name."""
    kind = torch.device(device).type if device is not None else "cpu"
    if weights != "fp32" and not (kind == "cpu" or (kind == "cuda" and weights == "q4")):
        raise NotImplementedError(
            f"weights={weights!r} runs on the CPU kernels (and 'q4' on CUDA); got device {device}"
        )


def _has_fbgemm() -> bool:
    """fbgemm (x86 CPUs) provides F16Linear's kernel; ARM builds (Apple silicon) have only qnnpack,
    which lacks it."""
    return "fbgemm" in torch.backends.quantized.supported_engines


def demo_weights(device: torch.device | str | None = None) -> str:
    """The weights path for demonstrations on `device`: DEMO_WEIGHTS on a CPU whose torch has its
    kernel, else "fp32" (a GPU runs load_model()'s own model fast enough, and no low-bit path but
    "q4" runs there)."""
    kind = torch.device(device).type if device is not None else "cpu"
    return DEMO_WEIGHTS if kind == "cpu" and _has_fbgemm() else "fp32"


def _inner_k_tiles(k: int) -> int:
    """CUDA's int4 layout tiles the input dimension by 16 * inner_k_tiles (2, 4 or 8); the largest
    that divides k."""
    for tiles in (8, 4, 2):
        if k % (16 * tiles) == 0:
            return tiles
    raise ValueError(f"CUDA int4 packing needs in_features divisible by 32, got {k}")


class Q4Linear(nn.Module):
    """y = x W^T with W stored as 4-bit integers q (0..15) and, per group of 32 inputs, a scale s
    and a zero z.

    Dequantization (torch's convention, checked by experiment): W[n, k] = (q[n, k] - 8) * s[g, n] +
    z[g, n], g = k // 32. A Q4_1 block (w = d*q + m) maps onto it without changing q: s = d, z = m +
    8*d. Kernel: torch.ops.aten._weight_int4pack_mm_for_cpu (activations, s and z in bfloat16; fp32
    accumulation); on CUDA torch.ops.aten._weight_int4pack_mm, whose packing differs (see __init__).
    """

    def __init__(
        self,
        q: torch.Tensor,
        scales: torch.Tensor,
        zeros: torch.Tensor,
        compute_dtype: torch.dtype = COMPUTE_DTYPE,
        device: torch.device | str | None = None,
    ):
        super().__init__()
        self.out_features, self.in_features = q.shape
        # float32 is exact but ~30x slower on this CPU: for tests
        self.compute_dtype = compute_dtype
        if self.in_features % GROUP or self.out_features % 16:
            raise ValueError(
                f"int4 packing needs in % {GROUP} == 0 and out % 16 == 0, got {tuple(q.shape)}"
            )
        device = torch.device(device or "cpu")
        if device.type == "cuda":
            # CUDA's kernel takes two weights per byte (even index in the high nibble) and its own
            # tiling; it runs in bfloat16 only. Same (q - 8) * s + z convention as the CPU kernel.
            if compute_dtype != torch.bfloat16:
                raise ValueError("the CUDA int4 kernel runs in bfloat16 only")
            # (out, in/2)
            pairs = (
                (q[:, ::2].to(torch.uint8) << 4 | q[:, 1::2].to(torch.uint8))
                .contiguous()
                .to(device)
            )
            packed = torch.ops.aten._convert_weight_to_int4pack(
                pairs, _inner_k_tiles(self.in_features)
            )
        else:
            # The CPU kernel's own layout: (out, in/2) bytes, tiled for its inner loop.
            packed = torch.ops.aten._convert_weight_to_int4pack_for_cpu(
                q.to(torch.int32).contiguous(), 1
            )
        self.register_buffer("packed", packed)
        # (in/32, out, 2): scale and zero of each group, the kernel's expected shape.
        self.register_buffer(
            "scales_and_zeros",
            torch.stack([scales.t(), zeros.t()], dim=-1)
            .to(device=device, dtype=compute_dtype)
            .contiguous(),
        )

    @classmethod
    def from_q4_1(
        cls,
        blocks: QuantizedBlocks,
        compute_dtype: torch.dtype = COMPUTE_DTYPE,
        device: torch.device | str | None = None,
    ) -> Q4Linear:
        """The file's Q4_1 tensor: same q, s = d, z = m + 8d (d and m are float16, so float32 holds
        m + 8d)."""
        d = torch.from_numpy(blocks.d.astype(np.float32))  # (out, in/32)
        m = torch.from_numpy(blocks.m.astype(np.float32))
        return cls(torch.from_numpy(blocks.q), d, m + 8 * d, compute_dtype, device)

    @classmethod
    def from_q8_0(
        cls,
        blocks: QuantizedBlocks,
        compute_dtype: torch.dtype = COMPUTE_DTYPE,
        device: torch.device | str | None = None,
    ) -> Q4Linear:
        """A Q8_0 tensor (w = d*q, q in -128..127) as 4-bit halves q = 16*hi + lo, side by side
        along the input.

        hi in -8..7 is stored as hi + 8 with s = 16d, z = 0; lo in 0..15 with s = d, z = 8d; the
        input is fed twice ([x, x]), so y = x (16 d hi)^T + x (d lo)^T = x (d q)^T: 8 bits per
        weight, no weight changed.
        """
        q = torch.from_numpy(blocks.q).to(torch.int32)  # (out, in)
        d = torch.from_numpy(blocks.d.astype(np.float32))  # (out, in/32)
        hi, lo = q >> 4, q & 0x0F  # arithmetic shift: hi = floor(q / 16)
        module = cls(
            torch.cat([hi + 8, lo], dim=1),
            torch.cat([16 * d, d], dim=1),
            torch.cat([torch.zeros_like(d), 8 * d], dim=1),
            compute_dtype,
            device,
        )
        module.repeat_input = 2
        module.in_features //= 2
        return module

    repeat_input = 1  # 2 for from_q8_0: the kernel sees the input twice

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        x2 = x.reshape(-1, self.in_features).to(self.compute_dtype)  # (M, in)
        if self.repeat_input == 2:
            x2 = torch.cat([x2, x2], dim=1)  # (M, 2 in)
        if self.packed.is_cuda:
            # (M, out)
            y = torch.ops.aten._weight_int4pack_mm(x2, self.packed, GROUP, self.scales_and_zeros)
        else:
            # (M, out)
            y = torch.ops.aten._weight_int4pack_mm_for_cpu(
                x2, self.packed, GROUP, self.scales_and_zeros
            )
        return y.to(x.dtype).reshape(*shape[:-1], self.out_features)


class Q8Linear(nn.Module):
    """y = x W^T with W[n, k] = q[n, k] * s[n]: int8 weights, one scale per output row (absmax /
    127).

    Requantizing the file's weights this way changes each by at most s[n] / 2 (round to nearest).
    Kernel: torch.ops.aten._weight_int8pack_mm (activations and s in bfloat16).
    """

    def __init__(self, weight: torch.Tensor):
        super().__init__()
        self.out_features, self.in_features = weight.shape
        w = weight.detach().float()
        scales = w.abs().amax(dim=1).clamp(min=torch.finfo(torch.float32).tiny) / 127  # (out,)
        # The kernel multiplies by a bf16 scale, so q is chosen for that one; rounding it 2^-7 up
        # first keeps s >= max|w| / 127, so no q needs clipping and each weight moves by at most s /
        # 2.
        scales = (scales * (1 + 2**-7)).to(COMPUTE_DTYPE).float()
        # (out, in)
        self.register_buffer("q", (w / scales[:, None]).round().clamp(-127, 127).to(torch.int8))
        self.register_buffer("scales", scales.to(COMPUTE_DTYPE))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        x2 = x.reshape(-1, self.in_features).to(COMPUTE_DTYPE)  # (M, in)
        y = torch.ops.aten._weight_int8pack_mm(x2, self.q, self.scales)  # (M, out)
        return y.to(x.dtype).reshape(*shape[:-1], self.out_features)


class F16Linear(nn.Module):
    """y = x W^T with W stored in float16 and x kept in float32.

    Kernel: torch.ops.quantized.linear_dynamic_fp16 (fbgemm: float16 weights widened to float32 in
    registers, float32 accumulation). Rounding the weights to float16 moves each by at most 2^-11 of
    its size.
    """

    def __init__(self, weight: torch.Tensor):
        super().__init__()
        self.out_features, self.in_features = weight.shape
        self.packed = torch.ops.quantized.linear_prepack_fp16(
            weight.detach().float().contiguous(), None
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        y = torch.ops.quantized.linear_dynamic_fp16(
            x.reshape(-1, self.in_features).float(), self.packed
        )
        return y.to(x.dtype).reshape(*shape[:-1], self.out_features)


def quantize_model(model: nn.Module, ckpt: Checkpoint, weights: str) -> nn.Module:
    """Swap model's linear layers and LM head for low-bit modules in place ("fp16", "q8", "q4",
    "q4f16"); return model."""
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {WEIGHTS}, got {weights!r}")
    if weights == "fp32":
        return model
    device = next(model.parameters()).device
    _check_device(device, weights)
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            if not isinstance(child, nn.Linear):
                continue
            full = f"{name}.{child_name}" if name else child_name
            if child.bias is not None:
                raise ValueError(
                    f"{full}: low-bit modules have no bias (Llama's linear layers have none)"
                )
            if weights in ("q4", "q4f16"):
                low = Q4Linear.from_q4_1(ckpt.blocks[f"{full}.weight"], device=device)
            elif weights == "fp16":
                low = F16Linear(child.weight)
            else:
                low = Q8Linear(child.weight)
            setattr(module, child_name, low)
    model.lm_head = (
        Q4Linear.from_q8_0(ckpt.blocks["embed_tokens.weight"], device=device)
        if weights == "q4"
        else F16Linear(model.embed_tokens.weight)
        if weights in ("fp16", "q4f16")
        else Q8Linear(model.embed_tokens.weight)
    )
    return model
