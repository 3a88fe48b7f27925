"""Shared, cached loaders for tests that need the real model (each load costs ~3.5 s, so do it once
per run)."""

from __future__ import annotations

from functools import lru_cache

import torch

from course_lib.weights import Checkpoint, build_model, fetch, read_gguf


@lru_cache(maxsize=1)
def checkpoint() -> Checkpoint:
    """The offline SmolLM2 checkpoint, read once."""
    return read_gguf(fetch(progress=False))


@lru_cache(maxsize=1)
def model():
    """Our model on the real weights, fp32, CPU."""
    ck = checkpoint()
    return build_model(ck.config, ck.state_dict, device="cpu", dtype=torch.float32)


@lru_cache(maxsize=1)
def tokenizer():
    """SmolLM2's tokenizer as a tiktoken Encoding."""
    from course_lib.tokenizer import build_model_tokenizer

    ck = checkpoint()
    return build_model_tokenizer(ck.tokens, ck.token_types, ck.merges)
