"""course_lib: the helpers the "How LLMs Work" notebooks import (tokenizers, model, weights,
generation, plots).

It never contains the answers to graded exercises.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

    from .model import KVCache, ModelConfig, Trace, Transformer

__all__ = [
    "KVCache",
    "ModelConfig",
    "ModelTokenizer",
    "Trace",
    "Transformer",
    "build_model_tokenizer",
    "chat_prompt",
    "cl100k_base",
    "load_demo_model",
    "load_model",
    "pick_device",
]

# torch takes seconds to import: the model's names load on first use (a check module or the
# tokenizer alone, e.g. in a grading process, never pays for it).
_LAZY = {"KVCache": "model", "ModelConfig": "model", "Trace": "model", "Transformer": "model"}

try:
    from .tokenizer import (
        ModelTokenizer,
        build_model_tokenizer,
        chat_prompt,
        cl100k_base,
        enable_offline_cl100k,
    )
except ModuleNotFoundError as e:
    # A fresh Colab runtime: the notebook's first cell imports course_lib.colab to install what is
    # missing (course_lib.colab.setup() then reloads this package). Anything else says what to do.
    _MISSING: ModuleNotFoundError | None = e
else:
    _MISSING = None
    # The notes' `tiktoken.get_encoding("cl100k_base")` must work offline once the course is
    # imported.
    enable_offline_cl100k()


def _missing(e: ModuleNotFoundError) -> ModuleNotFoundError:
    return ModuleNotFoundError(
        f"course_lib needs the package {e.name!r}, which is not installed: run the "
        "notebook's first cell (on Colab) or `pip install -e .` in the course folder"
    )


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        try:
            value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        except ModuleNotFoundError as e:
            raise _missing(e) from e
        globals()[name] = value
        return value
    if _MISSING is not None and name in __all__:
        raise _missing(_MISSING)
    raise AttributeError(f"module 'course_lib' has no attribute {name!r}")


_LOADED: dict[tuple[str, torch.dtype, str], tuple[Transformer, ModelTokenizer]] = {}


def load_model(
    device: str | torch.device | None = None,
    dtype: torch.dtype | None = None,
    progress: bool = True,
    fresh: bool = False,
    weights: str = "fp32",
) -> tuple[Transformer, ModelTokenizer]:
    """SmolLM2-135M-Instruct and its tokenizer, from the offline model file (fetched and verified if
    needed).

    The first load on a machine dequantizes the file (~1.5 s) and keeps the float32 weights in the
    cache (course_lib.weights.read_checkpoint); later loads map them (~0.7 s in all). A second call
    with the same device and dtype returns the same objects; pass fresh=True for a private copy
    (e.g. before changing its weights). weights="fp16", "q8", "q4" or "q4f16" runs the linear layers
    and LM head on low-bit weights for faster decode (CPU; "q4" also on CUDA; course_lib.lowbit;
    their quality against fp32: docs/benchmarks.md).
    """
    import torch

    from .device import default_dtype, pick_device
    from .weights import SMOLLM2, build_model, fetch, read_checkpoint, read_gguf

    device = torch.device(device) if device is not None else pick_device()
    dtype = dtype or default_dtype(device)
    key = (str(device), dtype, weights)
    if fresh or key not in _LOADED:
        if weights != "fp32":
            from .lowbit import WEIGHTS, _check_device

            if weights not in WEIGHTS:
                raise ValueError(f"weights must be one of {WEIGHTS}, got {weights!r}")
            _check_device(device, weights)
        path = fetch(progress=progress)
        # Only "q4" and "q4f16" need the file's own blocks; "fp16" and "q8" round the float32
        # weights, which the cache maps.
        ckpt = (
            read_gguf(path, keep_blocks=True)
            if weights in ("q4", "q4f16")
            else read_checkpoint(path, SMOLLM2.sha256)
        )
        model = build_model(ckpt.config, ckpt.state_dict, device=device, dtype=dtype)
        if weights != "fp32":
            from .lowbit import quantize_model

            model = quantize_model(model, ckpt, weights)
        tok = build_model_tokenizer(ckpt.tokens, ckpt.token_types, ckpt.merges)
        if fresh:
            return model, tok
        _LOADED[key] = (model, tok)
    return _LOADED[key]


def load_demo_model(
    device: str | torch.device | None = None, progress: bool = True
) -> tuple[Transformer, ModelTokenizer, str]:
    """(model, tokenizer, weights) for demonstrations whose lesson is not about exact values:
    load_model() on the fastest path that keeps the model's distributions
    (course_lib.lowbit.demo_weights: "fp16" on an x86 CPU, where its text may still differ from
    fp32's after a near-tie; load_model()'s own float model elsewhere). Graded comparisons never use
    it. Loaded once per kernel, like load_model().
    """
    import torch

    from .device import pick_device
    from .lowbit import demo_weights

    device = torch.device(device) if device is not None else pick_device()
    weights = demo_weights(device)
    model, tok = load_model(
        device,
        dtype=torch.float32 if weights != "fp32" else None,
        progress=progress,
        weights=weights,
    )
    return model, tok, weights


def pick_device() -> torch.device:
    """cuda > mps > cpu (see course_lib.device)."""
    from .device import pick_device as pick

    return pick()
