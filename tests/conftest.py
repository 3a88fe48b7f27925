"""Shared pytest setup: markers, headless matplotlib, and model fixtures.

Markers:
- `gpu`: needs a CUDA device. Skipped where torch sees none, which includes CI: CI machines have no
GPU,
  so these tests run only where a student or instructor has one (Colab, a lab machine).
- `model`: loads the real SmolLM2-135M weights (fetched by `./course test` before pytest starts);
  a few seconds each. Deselect with `-m "not model"` for a quick run.
"""

from __future__ import annotations

import os

# Before anything imports pyplot: tests never open windows.
os.environ.setdefault("MPLBACKEND", "Agg")

import pytest
import torch


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "gpu: needs a CUDA device; skipped without one (CI has none)"
    )
    config.addinivalue_line("markers", "model: loads the real SmolLM2-135M weights (seconds)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU; torch sees none (CI machines have no GPU)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def real_model():
    """(model, tokenizer) for SmolLM2-135M-Instruct in float32 on the CPU, loaded once per test
    session."""
    from course_lib import load_model

    return load_model(device="cpu", dtype=torch.float32)
