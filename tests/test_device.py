"""Tests of course_lib.device. CPU tests fake the GPU where the logic (not the hardware) is under
test; tests marked `gpu` use a real CUDA device and are skipped without one (CI has no GPU).

Cost: ~3 s (one subprocess that imports torch, a 256 MiB buffer).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from course_lib import device as dev


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.delenv("COURSE_DEVICE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(dev, "_mps_available", lambda: False)


def test_pick_device_prefers_cuda_then_mps_then_cpu(no_gpu, monkeypatch):
    assert dev.pick_device() == torch.device("cpu")
    monkeypatch.setattr(dev, "_mps_available", lambda: True)
    assert dev.pick_device() == torch.device("mps")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert dev.pick_device() == torch.device("cuda")


def test_pick_device_honours_course_device(no_gpu, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setenv("COURSE_DEVICE", "cpu")
    assert dev.pick_device() == torch.device("cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setenv("COURSE_DEVICE", "cuda:0")
    with pytest.raises(RuntimeError, match="no CUDA"):
        dev.pick_device()


def test_default_dtype(monkeypatch):
    assert dev.default_dtype("cpu") is torch.float32
    assert dev.default_dtype(torch.device("mps")) is torch.float32
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert dev.default_dtype("cuda") is torch.bfloat16
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    assert dev.default_dtype("cuda:1") is torch.float32


def test_timer_measures_wall_time():
    with dev.Timer() as t:
        time.sleep(0.05)
    assert 0.05 <= t.seconds < 1.0
    assert str(t).endswith(" ms")


def test_timer_synchronises_cuda_before_reading_the_clock(monkeypatch):
    calls = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: calls.append(time.perf_counter()))
    monkeypatch.setattr(dev, "_mps_available", lambda: False)
    with dev.Timer("cuda") as t:
        pass
    assert len(calls) == 2  # on entry and on exit
    with dev.Timer("cpu"):
        pass
    assert len(calls) == 2  # a CPU timer has nothing to wait for
    assert t.seconds >= 0


def _vm_hwm_bytes() -> int:
    """Peak RSS as the Linux kernel reports it, read independently of course_lib."""
    for row in Path("/proc/self/status").read_text().splitlines():
        if row.startswith("VmHWM:"):
            return int(row.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc/self/status")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_peak_memory_sees_a_large_buffer():
    buffer = np.ones(256 * 2**20, dtype=np.uint8)  # touch every page: 256 MiB resident
    report = dev.peak_memory()
    kernel = _vm_hwm_bytes()
    assert report.rss_bytes >= buffer.nbytes
    assert abs(report.rss_bytes - kernel) < 64 * 2**20, (report.rss_bytes, kernel)
    assert "GiB" in str(report)
    if not torch.cuda.is_available():
        assert report.cuda_bytes is None and "CUDA" not in str(report)


def test_seed_everything_repeats_python_numpy_torch():
    def draws():
        g = dev.seed_everything(7)
        return (
            random.random(),
            float(np.random.rand()),
            float(torch.rand(())),
            float(torch.rand((), generator=g)),
        )

    first = draws()
    assert draws() == first
    assert torch.rand((), generator=torch.Generator().manual_seed(7)).item() == first[3]
    dev.seed_everything(8)
    assert random.random() != first[0]


def test_set_threads_returns_previous_and_rejects_zero():
    before = torch.get_num_threads()
    try:
        assert dev.set_threads(1) == before
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
    with pytest.raises(ValueError):
        dev.set_threads(0)


def test_is_grading_reads_the_environment(monkeypatch):
    monkeypatch.setenv("COURSE_GRADING", "1")
    assert dev.is_grading()
    monkeypatch.setenv("COURSE_GRADING", "0")
    assert not dev.is_grading()
    monkeypatch.delenv("COURSE_GRADING")
    assert not dev.is_grading()


@pytest.mark.parametrize("value, expected", [("1", "True"), ("", "False")])
def test_grading_constant_is_set_at_import(value, expected):
    code = "import course_lib.device as d; print(d.GRADING)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "COURSE_GRADING": value},
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == expected


@pytest.mark.gpu
def test_gpu_device_dtype_timer_memory():
    """Needs CUDA; skipped on CI, which has no GPU."""
    assert dev.pick_device().type == "cuda"
    assert dev.default_dtype("cuda") is (
        torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float32
    )
    torch.cuda.reset_peak_memory_stats()
    x = torch.randn(8192, 8192, device="cuda")  # 256 MiB
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    with dev.Timer("cuda") as t:
        start.record()
        for _ in range(20):
            x = x @ x / 8192**0.5
        end.record()
    # CUDA events time the GPU work itself: a timer that did not wait would read far less.
    assert t.seconds >= 0.9 * start.elapsed_time(end) / 1e3
    assert dev.peak_memory().cuda_bytes >= x.numel() * 4
