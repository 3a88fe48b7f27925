"""Decode speed of course_lib's SmolLM2-135M on this CPU, side by side in one run (ratios survive noise):

  (0) threads: prefill and decode tok/s at 1 and 2 threads -> the thread count for (a) and (c);
  (a) course_lib vs Hugging Face transformers `generate()` on the same GGUF weights, same threads;
  (b) KV cache vs no cache, wall time for 64 / 128 / 256 new tokens;
  (c) memory bandwidth measured now, divided by the bytes of weights one decoded token reads
      = the bandwidth-limited tok/s; achieved decode tok/s as a fraction of it.

Decode rate is measured as N / (t(1 + N new tokens) - t(1 new token)): the difference cancels the prefill.
Repetitions are interleaved (A B A B) so that a neighbour's burst of CPU use hits both sides alike; the
best of the repetitions is reported (noise only ever slows a run down).

    python benchmarks/decode.py              # ~5 minutes on 2 quiet cores (no cache at 256 tokens: ~2)
    python benchmarks/decode.py --quick      # fewer tokens and repetitions, ~1.5 minutes
    python benchmarks/decode.py --profile    # plus torch.profiler's top ops for 16 decode steps
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import time
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from course_lib import load_model
from course_lib.device import set_threads
from course_lib.generate import generate
from course_lib.weights import fetch

PROMPT = "The history of the printing press begins in"
LONG_PROMPT = ("In the middle of the fifteenth century, a goldsmith in Mainz combined a screw press, oil-based "
               "ink and movable metal type into a machine that could print a page in minutes. ") * 6


def best_of(fns: dict[str, callable], reps: int) -> dict[str, float]:
    """Run each fn `reps` times, interleaved (A B A B ...); return each one's fastest wall time in seconds."""
    best = {name: float("inf") for name in fns}
    for _ in range(reps):
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def ours_generate(model, ids: list[int], n: int, use_cache: bool = True) -> list[int]:
    return generate(model, [ids], n, stop_tokens=(), use_cache=use_cache, progress=False)[0]


def load_hf(gguf: Path):
    """transformers' own Llama, loaded from the same GGUF file (dequantized to float32)."""
    from transformers import AutoModelForCausalLM
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    # Its GGUF loader draws a tqdm bar of its own; keep the report readable.
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    return model.eval()


def hf_generate(model, ids: list[int], n: int) -> list[int]:
    x = torch.tensor([ids])
    with torch.inference_mode():
        out = model.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=n, min_new_tokens=n,
                             do_sample=False, use_cache=True, pad_token_id=0)
    return out[0, len(ids):].tolist()


def decode_rate(gen, n: int, reps: int) -> dict[str, float]:
    """tok/s of the decode phase for each generator `gen[name](n_new)`, prefill cancelled out."""
    fns = {}
    for name, g in gen.items():
        fns[f"{name}:1"] = lambda g=g: g(1)
        fns[f"{name}:n"] = lambda g=g: g(1 + n)
    t = best_of(fns, reps)
    return {name: n / (t[f"{name}:n"] - t[f"{name}:1"]) for name in gen}


def bandwidth(threads: int, mib: int = 512, reps: int = 5) -> tuple[float, float, float]:
    """(read, copy, matrix-vector) GB/s over float32 data far larger than the CPU caches (32 MiB L3 here).

    read: `sum` of a buffer; copy: bytes read + written; matrix-vector: `F.linear` of one row through many
    distinct 1536x576 weights (the shape of SmolLM2's MLP), the operation decode spends its time in."""
    set_threads(threads)
    a = torch.ones(mib * 2**20 // 4)
    b = torch.empty_like(a)
    weights = list(a[: (a.numel() // (1536 * 576)) * 1536 * 576].view(-1, 1536, 576).unbind(0))
    x = torch.ones(1, 576)
    gemv = lambda: [torch.nn.functional.linear(x, w) for w in weights]  # noqa: E731
    a.sum(), b.copy_(a), gemv()  # touch every page before timing
    t = best_of({"read": lambda: a.sum(), "copy": lambda: b.copy_(a), "gemv": gemv}, reps)
    gemv_bytes = sum(w.nbytes for w in weights)
    return a.nbytes / t["read"] / 1e9, 2 * a.nbytes / t["copy"] / 1e9, gemv_bytes / t["gemv"] / 1e9


def weight_bytes_per_token(model) -> int:
    """Bytes of parameters one decode step reads: every weight once; the tied embedding once (as LM head;
    the input lookup reads a single row)."""
    seen, total = set(), 0
    for p in model.parameters():  # parameters() yields a tied tensor once
        if p.data_ptr() not in seen:
            seen.add(p.data_ptr())
            total += p.numel() * p.element_size()
    return total


def section(title: str) -> None:
    print(f"\n== {title}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer tokens and repetitions (~1.5 min)")
    parser.add_argument("--profile", action="store_true", help="print torch.profiler's top ops for decode")
    parser.add_argument("--no-hf", action="store_true", help="skip the transformers comparison")
    args = parser.parse_args()
    reps = 2 if args.quick else 3
    n_decode = 32 if args.quick else 64
    lengths = (16, 32, 64) if args.quick else (64, 128, 256)
    wall = time.perf_counter()

    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs, float32, batch 1, best of {reps} interleaved runs")
    # Other processes on a 2-core machine change every absolute number (ratios less): say how busy it was.
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    model, tok = load_model(device="cpu", dtype=torch.float32, progress=False)
    ids = tok.encode(PROMPT)
    long_ids = tok.encode(LONG_PROMPT)
    ours = lambda n: ours_generate(model, ids, n)  # noqa: E731

    section("(0) threads: prefill and decode")
    prefill, decode = {}, {}
    for threads in (1, 2):
        set_threads(threads)
        x = torch.tensor([long_ids])
        model(x)  # warm-up
        prefill[threads] = len(long_ids) / best_of({"prefill": lambda: model(x)}, reps)["prefill"]
        decode[threads] = decode_rate({"ours": ours}, n_decode // 2, 2)["ours"]
        print(f"  {threads} thread(s): prefill {prefill[threads]:6.1f} tok/s ({len(long_ids)} tokens), "
              f"decode {decode[threads]:5.1f} tok/s")
    threads = 2 if decode[2] > 1.05 * decode[1] else 1
    print(f"  2 threads / 1 thread: prefill {prefill[2] / prefill[1]:.2f}x, decode {decode[2] / decode[1]:.2f}x"
          f" -> {threads} thread(s) below")
    set_threads(threads)

    section(f"(a) course_lib vs transformers generate(), greedy, {n_decode} new tokens, {threads} thread(s)")
    contenders = {"course_lib": ours}
    if not args.no_hf:
        hf = load_hf(fetch(progress=False))
        same = ours(16) == hf_generate(hf, ids, 16)
        contenders["transformers"] = lambda n: hf_generate(hf, ids, n)
    rates = decode_rate(contenders, n_decode, reps)
    for name, r in rates.items():
        print(f"  {name:13s} {r:5.1f} tok/s")
    if not args.no_hf:
        print(f"  ratio course_lib / transformers = {rates['course_lib'] / rates['transformers']:.2f}x "
              f"(target >= 1.3x); same greedy tokens: {same}")
        del hf, contenders["transformers"]

    section("(c) memory-bandwidth limit")
    bw = {n: bandwidth(n) for n in (1, 2)}
    for n, (read, copy, gemv) in bw.items():
        print(f"  {n} thread(s): read {read:5.1f} GB/s, copy {copy:5.1f} GB/s, "
              f"float32 matrix-vector (F.linear) {gemv:5.1f} GB/s")
    set_threads(threads)
    limit_bw = max(read for read, _, _ in bw.values())
    gemv_bw = max(gemv for _, _, gemv in bw.values())
    per_token = weight_bytes_per_token(model)
    limit = limit_bw * 1e9 / per_token
    achieved = rates["course_lib"]
    cfg = model.config
    print(f"  weights read per decoded token: {per_token / 1e6:.0f} MB ({per_token / 4e6:.1f} M float32 parameters, "
          f"tied embedding counted once; the KV cache adds "
          f"{2 * cfg.n_layer * cfg.n_kv_head * cfg.head_dim * 4 / 1e3:.0f} kB per cached position)")
    print(f"  bandwidth-limited decode = {limit_bw:.1f} GB/s / {per_token / 1e6:.0f} MB = {limit:.1f} tok/s")
    print(f"  achieved {achieved:.1f} tok/s = {achieved / limit:.2f} of that limit (target >= 0.7)")
    print(f"  (torch's own float32 matrix-vector speed caps any float32 model at "
          f"{gemv_bw * 1e9 / per_token:.1f} tok/s here; achieved = {achieved / (gemv_bw * 1e9 / per_token):.2f} of it)")

    section(f"(b) KV cache vs no cache, wall time including prefill, {threads} thread(s)")
    for n in lengths:
        t = best_of({"cache": lambda: ours_generate(model, ids, n, True),
                     "no cache": lambda: ours_generate(model, ids, n, False)}, 1)
        print(f"  {n:4d} new tokens: cache {t['cache']:6.2f} s, no cache {t['no cache']:6.2f} s, "
              f"no cache / cache = {t['no cache'] / t['cache']:5.2f}x", flush=True)

    if args.profile:
        section(f"profile: 16 decode steps, {threads} thread(s)")
        from torch.profiler import ProfilerActivity, profile

        cache = model.new_cache(batch_size=1, max_len=len(ids) + 17)
        model(torch.tensor([ids]), cache=cache)
        x = torch.tensor([[ids[-1]]])
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(16):
                model(x, cache=cache)
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=12))

    print(f"\nload average at end: {os.getloadavg()[0]:.2f}; total {time.perf_counter() - wall:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
