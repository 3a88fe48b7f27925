"""Where the model runs and how we measure it: device and dtype choice, a synchronising timer, peak
memory, seeding, thread count (and the notebooks' thread policy), and the grading flag.

Everything here takes the device as an argument or picks it once with `pick_device()`; nothing
assumes CUDA. GPU kernels run asynchronously, so a timer that reads the clock without synchronising
measures only how long it took to *queue* the work; `Timer` synchronises first.
"""

from __future__ import annotations

import os
import random
import resource
import sys
import time
from dataclasses import dataclass

import numpy as np
import torch

__all__ = [
    "GRADING",
    "MemoryReport",
    "Timer",
    "default_dtype",
    "is_grading",
    "peak_memory",
    "pick_device",
    "seed_everything",
    "set_threads",
    "synchronize",
    "thread_policy",
    "use_thread_policy",
]


def is_grading() -> bool:
    """True when the grading harness runs us (env `COURSE_GRADING=1`): demos shrink or skip."""
    return os.environ.get("COURSE_GRADING", "") == "1"


# Read once at import: the harness sets the variable before the kernel starts.
GRADING: bool = is_grading()


def _mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def pick_device() -> torch.device:
    """The best available device: env `COURSE_DEVICE` if set, else cuda > mps > cpu."""
    forced = os.environ.get("COURSE_DEVICE", "").strip()
    if forced:
        device = torch.device(forced)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise RuntimeError(f"COURSE_DEVICE={forced!r} but torch sees no CUDA device")
        if device.type == "mps" and not _mps_available():
            raise RuntimeError(f"COURSE_DEVICE={forced!r} but torch sees no MPS device")
        return device
    if torch.cuda.is_available():
        return torch.device("cuda")
    if _mps_available():
        return torch.device("mps")
    return torch.device("cpu")


def default_dtype(device: torch.device | str) -> torch.dtype:
    """bfloat16 on a CUDA device that supports it (half the bytes, fp32's range), else float32."""
    device = torch.device(device)
    if device.type == "cuda" and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    # CPU bf16 matmuls are slow on most laptops, and MPS bf16 support varies by OS version.
    return torch.float32


def synchronize(device: torch.device | str | None = None) -> None:
    """Wait until every queued kernel on `device` (default: all GPUs in use) has finished."""
    kind = torch.device(device).type if device is not None else None
    if kind in (None, "cuda") and torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()
    if kind in (None, "mps") and _mps_available():
        torch.mps.synchronize()


class Timer:
    """Wall-clock timer that synchronises the device on entry and exit.

    >>> with Timer() as t:
    ...     _ = sum(range(1000))
    >>> t.seconds >= 0
    True
    """

    def __init__(self, device: torch.device | str | None = None) -> None:
        self.device = device
        self.seconds: float = float("nan")
        self._start = 0.0

    def __enter__(self) -> "Timer":
        synchronize(self.device)
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        synchronize(self.device)
        self.seconds = time.perf_counter() - self._start

    def __str__(self) -> str:
        return f"{self.seconds * 1e3:.1f} ms" if self.seconds < 1 else f"{self.seconds:.2f} s"


@dataclass(frozen=True)
class MemoryReport:
    """Peak memory of this process: CPU resident set and (if used) CUDA tensors."""

    # peak resident set size of the whole process (weights, activations, Python itself)
    rss_bytes: int
    cuda_bytes: int | None  # peak bytes held by CUDA tensors since start/reset; None without CUDA

    def __str__(self) -> str:
        text = f"peak RSS {self.rss_bytes / 2**30:.2f} GiB"
        if self.cuda_bytes is not None:
            text += f", peak CUDA allocated {self.cuda_bytes / 2**30:.2f} GiB"
        return text


def _peak_rss_bytes() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports kibibytes, macOS bytes.
    peak = peak if sys.platform == "darwin" else peak * 1024
    try:
        import psutil

        peak = max(peak, psutil.Process().memory_info().rss)
    except ImportError:
        pass
    return int(peak)


def peak_memory() -> MemoryReport:
    """Peak process RSS and, if CUDA is in use, peak CUDA memory allocated
    (`torch.cuda.max_memory_allocated`)."""
    cuda = None
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        cuda = int(torch.cuda.max_memory_allocated())
    return MemoryReport(rss_bytes=_peak_rss_bytes(), cuda_bytes=cuda)


def seed_everything(seed: int) -> torch.Generator:
    """Seed Python, NumPy and torch (all devices); return a CPU `torch.Generator` seeded the same
    way."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    generator = torch.Generator()
    generator.manual_seed(seed)
    return generator


def set_threads(n: int) -> int:
    """Use `n` CPU threads for torch ops (intra-op); returns the previous count."""
    if n < 1:
        raise ValueError(f"need at least one thread, got {n}")
    previous = torch.get_num_threads()
    torch.set_num_threads(n)
    return previous


def thread_policy(cpu_count: int | None = None) -> int:
    """Intra-op threads for the notebooks: env `COURSE_THREADS` if set, else 1 on <= 2 cores, else
    half (<= 4).

    Why (benchmarks/pace.py, docs/benchmarks.md): decode-sized work (one token's matrix-vector
    products) gains nothing from a second thread, and torch's default of one thread per core
    collapses when another process wants a core: on 2 cores shared with other work, 2 threads were
    3-8x slower than 1 for a 200-token prefill and 4-6x for decode. Only a prefill on an otherwise
    idle machine pays (~1.8x on 2 cores). On more cores we keep half of them for the browser, the
    Jupyter server and a second kernel.
    """
    forced = os.environ.get("COURSE_THREADS", "").strip()
    if forced:
        n = int(forced)
        if n < 1:
            raise ValueError(f"COURSE_THREADS must be a positive integer, got {forced!r}")
        return n
    cores = cpu_count if cpu_count is not None else (os.cpu_count() or 1)
    return 1 if cores <= 2 else min(cores // 2, 4)


def use_thread_policy() -> int:
    """Apply `thread_policy()` to torch (intra-op threads, and one inter-op thread) and return the
    count."""
    n = thread_policy()
    torch.set_num_threads(n)
    try:
        # Allowed once, before any inter-op parallel work has started; later calls raise
        # RuntimeError.
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    return n
