"""Decode speed of course_lib's SmolLM2-135M on this CPU, side by side in one run (ratios survive
noise):

  (0) threads: prefill and decode tok/s at 1 and 2 threads -> the thread count for (a) and (c);
  (a) course_lib's weight paths (fp32, and `load_model(weights=...)`'s fp16 / q8 / q4 / q4f16: see
      course_lib.lowbit) vs Hugging Face transformers `generate()` (fp32, same GGUF file, same
      threads), and llama.cpp (llama-cpp-python, same file, same threads) as an upper anchor when it
      is installed; greedy tokens of every path compared with course_lib fp32's;
  (q) each path's quality as llama.cpp's `perplexity --kl-divergence` states it
  (benchmarks/quality.py):
      teacher-forced over benchmarks/data/quality_text.txt, mean KL(fp32 || path), its 99th
      percentile, top-1 agreement with fp32, perplexity ratio; fp32 against itself is the control
      (0, 100 %, 1.000). Printed beside (a)'s speed, with the fastest path that meets issue 35's bar
      (agreement >= 99 %, mean KLD <= 0.01) and its speed ratio to transformers from (a)'s
      interleaved run;
  (b) KV cache vs no cache, wall time for 64 / 128 / 256 new tokens;
  (c) memory bandwidth measured now, divided by the bytes of weights one decoded token reads on each
  path
      = that path's bandwidth-limited tok/s; achieved decode tok/s as a fraction of it; and the time
      per token spent outside the weight kernels (Python, norms, attention: what is left once the
      products shrink).

Decode rate is measured as N / (t(1 + N new tokens) - t(1 new token)): the difference cancels the
prefill. Repetitions are interleaved (A B A B) so that a neighbour's burst of CPU use hits both
sides alike; the best of the repetitions is reported (noise only ever slows a run down).

    python benchmarks/decode.py              # ~5 minutes on 2 quiet cores (no cache at 256 tokens:
    ~2) python benchmarks/decode.py --quick      # fewer tokens and repetitions, (q) on 2 of 9
    windows, ~3 minutes python benchmarks/decode.py --profile    # plus torch.profiler's top ops for
    16 decode steps
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

# run from a checkout without installing
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# not in course_lib: it computes a perplexity, which notebook 02 asks students to write
from benchmarks import quality
from course_lib import load_model
from course_lib.device import set_threads
from course_lib.generate import generate
from course_lib.lowbit import F16Linear, Q4Linear, Q8Linear
from course_lib.weights import fetch

LOW_BIT = ("fp16", "q8", "q4", "q4f16")  # load_model(weights=...) paths compared with fp32

PROMPT = "The history of the printing press begins in"
LONG_PROMPT = (
    "In the middle of the fifteenth century, a goldsmith in Mainz combined a screw press, "
    "oil-based ink and movable metal type into a machine that could print a page in minutes. "
) * 6


def best_of(fns: dict[str, callable], reps: int) -> dict[str, float]:
    """Run each fn `reps` times, interleaved (A B A B ...); return each one's fastest wall time in
    seconds."""
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
        model = AutoModelForCausalLM.from_pretrained(
            gguf.parent, gguf_file=gguf.name, dtype=torch.float32
        )
    return model.eval()


def hf_generate(model, ids: list[int], n: int) -> list[int]:
    x = torch.tensor([ids])
    with torch.inference_mode():
        out = model.generate(
            x,
            attention_mask=torch.ones_like(x),
            max_new_tokens=n,
            min_new_tokens=n,
            do_sample=False,
            use_cache=True,
            pad_token_id=0,
        )
    return out[0, len(ids) :].tolist()


def load_llama_cpp(gguf: Path, threads: int):
    """llama.cpp's own runtime on the same file, or None when llama-cpp-python is not installed."""
    try:
        from llama_cpp import Llama
    except ImportError:
        return None
    return Llama(
        model_path=str(gguf), n_ctx=512, n_threads=threads, n_threads_batch=threads, verbose=False
    )


def llama_cpp_generate(llm, ids: list[int], n: int) -> list[int]:
    """n greedy tokens from llama.cpp (its sampler at top_k=1 is argmax); the same token ids as
    ours."""
    out = []
    for token in llm.generate(ids, top_k=1, top_p=1.0, temp=0.0, repeat_penalty=1.0, reset=True):
        out.append(token)
        if len(out) == n:
            break
    return out


def decode_rate(gen, n: int, reps: int) -> dict[str, float]:
    """tok/s of the decode phase for each generator `gen[name](n_new)`, prefill cancelled out."""
    fns = {}
    for name, g in gen.items():
        fns[f"{name}:1"] = lambda g=g: g(1)
        fns[f"{name}:n"] = lambda g=g: g(1 + n)
    t = best_of(fns, reps)
    return {name: n / (t[f"{name}:n"] - t[f"{name}:1"]) for name in gen}


def bandwidth(threads: int, mib: int = 512, reps: int = 5) -> tuple[float, float, float]:
    """(read, copy, matrix-vector) GB/s over float32 data far larger than the CPU caches (32 MiB L3
    here).

    read: `sum` of a buffer; copy: bytes read + written; matrix-vector: `F.linear` of one row
    through many distinct 1536x576 weights (the shape of SmolLM2's MLP), the operation decode spends
    its time in."""
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
    """Bytes of weights one decode step reads, as this model stores them: every weight once; the
    tied embedding once as LM head (the input lookup reads a single row); with a low-bit LM head,
    that head plus one float32 embedding row."""
    total = 0
    for module in model.modules():
        if isinstance(module, (Q4Linear, Q8Linear)):
            # packed weights + scales
            total += sum(b.numel() * b.element_size() for b in module.buffers())
        elif isinstance(module, F16Linear):
            # fbgemm's packed float16 (opaque object)
            total += 2 * module.in_features * module.out_features
        elif (
            isinstance(module, torch.nn.Embedding)
            and module is model.embed_tokens
            and model.lm_head is not None
        ):
            total += module.embedding_dim * module.weight.element_size()  # one row
        else:
            total += sum(p.numel() * p.element_size() for p in module.parameters(recurse=False))
    return total


def kernel_seconds_per_token(model, reps: int) -> float:
    """Time of the weight products alone for one decoded token: every linear layer and the LM head,
    called in model order on one random row (best of reps); the rest of a decode step is Python,
    norms, attention."""
    heads = [model.lm_head] if model.lm_head is not None else []
    layers = [
        m
        for m in model.modules()
        if isinstance(m, (torch.nn.Linear, Q4Linear, Q8Linear, F16Linear))
        and m is not model.lm_head
    ] + heads
    inputs = [torch.randn(1, 1, m.in_features) for m in layers]
    if model.lm_head is None:
        w = model.embed_tokens.weight
        products = lambda: ([m(x) for m, x in zip(layers, inputs)], inputs[0] @ w.T)  # noqa: E731
    else:
        products = lambda: [m(x) for m, x in zip(layers, inputs)]  # noqa: E731
    products()
    return best_of({"k": products}, reps)["k"]


def section(title: str) -> None:
    print(f"\n== {title}", flush=True)


def print_quality(
    models: dict, tok, rates: dict[str, float], threads: int, max_windows: int | None
) -> None:
    """Section (q): each path's llama.cpp-style quality against fp32 beside its speed from (a), and
    the fastest path that meets issue 35's bar, with its ratio to transformers from the same
    interleaved run."""
    ids = quality.text_ids(tok)
    n_windows = len(quality.windows(len(ids), quality.CTX))
    used = min(n_windows, max_windows or n_windows)
    section(
        f"(q) quality vs fp32, teacher-forced: {quality.TEXT.name} ({len(ids)} tokens), windows of "
        f"{quality.CTX} every {quality.CTX // 2} scored on their second half ({used} of "
        f"{n_windows} windows), {threads} thread(s)"
    )
    start = time.perf_counter()
    tick = lambda done, total: print(
        f"  window {done}/{total} ({time.perf_counter() - start:.0f} s)", flush=True
    )  # noqa: E731
    results = quality.compare(models["fp32"], models, ids, max_windows=max_windows, progress=tick)
    hf = rates.get("transformers")
    print(
        f"  {'path':6s} {'tok/s':>6s} {'x transf.':>9s} {'mean KLD':>9s} {'99% KLD':>8s} "
        f"{'max KLD':>8s} {'same top':>8s} {'PPL':>7s} {'PPL/fp32':>8s} {'ln ratio':>9s}  bar"
    )
    for w, q in results.items():
        r = rates[f"course_lib {w}"]
        ratio = f"{r / hf:9.2f}" if hf else f"{'-':>9s}"
        print(
            f"  {w:6s} {r:6.1f} {ratio} {q.mean_kld:9.6f} {q.p99_kld:8.5f} {q.max_kld:8.5f} "
            f"{100 * q.agreement:7.2f}% {q.ppl:7.3f} {q.ppl_ratio:8.4f} {q.ln_ppl_ratio:9.6f}  "
            f"{'meets' if q.qualifies() else 'fails'}"
        )
    print(
        f"  ({results['fp32'].positions} scored positions; bar: same top >= "
        f"{100 * quality.AGREEMENT_MIN:.0f} % "
        f"and mean KLD <= {quality.KLD_MAX}; KLD in nats, KL(fp32 || path) as llama.cpp's)"
    )
    best = max(
        (w for w, q in results.items() if q.qualifies()), key=lambda w: rates[f"course_lib {w}"]
    )
    line = f"  fastest path that meets the bar: {best}, {rates[f'course_lib {best}']:.1f} tok/s"
    if hf:
        ratio = rates[f"course_lib {best}"] / hf
        line += (
            f" = {ratio:.2f}x transformers generate() (target >= 2.5x: "
            f"{'met' if ratio >= 2.5 else 'not met'})"
        )
    print(line, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="fewer tokens and repetitions (~1.5 min)"
    )
    parser.add_argument(
        "--profile", action="store_true", help="print torch.profiler's top ops for decode"
    )
    parser.add_argument("--no-hf", action="store_true", help="skip the transformers comparison")
    parser.add_argument(
        "--no-llama-cpp", action="store_true", help="skip llama.cpp even when it is installed"
    )
    args = parser.parse_args()
    reps = 2 if args.quick else 3
    n_decode = 32 if args.quick else 64
    lengths = (16, 32, 64) if args.quick else (64, 128, 256)
    wall = time.perf_counter()

    print(
        f"torch {torch.__version__}, {os.cpu_count()} CPUs, float32 activations, batch 1, best of "
        f"{reps} interleaved runs"
    )
    # Other processes on a 2-core machine change every absolute number (ratios less): say how busy
    # it was.
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
        print(
            f"  {threads} thread(s): prefill {prefill[threads]:6.1f} tok/s ({len(long_ids)} "
            "tokens), "
            f"decode {decode[threads]:5.1f} tok/s"
        )
    threads = 2 if decode[2] > 1.05 * decode[1] else 1
    print(
        f"  2 threads / 1 thread: prefill {prefill[2] / prefill[1]:.2f}x, decode "
        f"{decode[2] / decode[1]:.2f}x -> {threads} thread(s) below"
    )
    set_threads(threads)

    section(
        f"(a) course_lib's weight paths vs transformers generate(), greedy, {n_decode} new tokens, "
        f"{threads} thread(s)"
    )
    models = {"fp32": model}
    for w in LOW_BIT:
        models[w], _ = load_model(device="cpu", dtype=torch.float32, progress=False, weights=w)
    contenders = {
        f"course_lib {w}": (lambda n, m=m: ours_generate(m, ids, n)) for w, m in models.items()
    }
    tokens = {name: g(n_decode) for name, g in contenders.items()}
    if not args.no_hf:
        hf = load_hf(fetch(progress=False))
        contenders["transformers"] = lambda n: hf_generate(hf, ids, n)
        tokens["transformers"] = hf_generate(hf, ids, n_decode)
    llm = None if args.no_llama_cpp else load_llama_cpp(fetch(progress=False), threads)
    if llm is not None:
        contenders["llama.cpp"] = lambda n: llama_cpp_generate(llm, ids, n)
        tokens["llama.cpp"] = llama_cpp_generate(llm, ids, n_decode)
    rates = decode_rate(contenders, n_decode, reps)
    reference = tokens["course_lib fp32"]
    for name, r in rates.items():
        same = next((i for i, (a, b) in enumerate(zip(tokens[name], reference)) if a != b), None)
        agree = "identical" if same is None else f"differ from token {same}"
        line = f"  {name:17s} {r:5.1f} tok/s"
        if "transformers" in rates:
            line += f"  {r / rates['transformers']:5.2f}x transformers"
        if "llama.cpp" in rates:
            line += f"  {r / rates['llama.cpp']:5.2f}x llama.cpp"
        print(f"{line}  greedy tokens vs course_lib fp32: {agree}")
    if "transformers" in rates:
        print("  (targets: fp32 >= 1.3x transformers; a path meeting (q)'s quality bar >= 2.5x)")
    else:
        print("  (transformers skipped: --no-hf)")
    if llm is None:
        print(
            "  llama.cpp: not installed (optional upper anchor: pip install llama-cpp-python, see "
            "docs/benchmarks.md)"
        )
    hf = llm = None
    contenders.pop("transformers", None), contenders.pop("llama.cpp", None)

    print_quality(models, tok, rates, threads, max_windows=2 if args.quick else None)

    section("(c) memory-bandwidth limit")
    bw = {n: bandwidth(n) for n in (1, 2)}
    for n, (read, copy, gemv) in bw.items():
        print(
            f"  {n} thread(s): read {read:5.1f} GB/s, copy {copy:5.1f} GB/s, "
            f"float32 matrix-vector (F.linear) {gemv:5.1f} GB/s"
        )
    set_threads(threads)
    limit_bw = max(read for read, _, _ in bw.values())
    gemv_bw = max(gemv for _, _, gemv in bw.values())
    cfg = model.config
    print(
        f"  the KV cache adds {2 * cfg.n_layer * cfg.n_kv_head * cfg.head_dim * 4 / 1e3:.0f} kB "
        "per cached "
        f"position to every step (not counted below); tied embedding counted once"
    )
    print(
        f"  {'path':5s} {'MB/token':>9s} {'limit tok/s':>12s} {'achieved':>9s} {'fraction':>9s} "
        f"{'ms/token':>9s} {'in kernels':>11s} {'outside':>8s}"
    )
    for w, m in models.items():
        per_token = weight_bytes_per_token(m)
        limit = limit_bw * 1e9 / per_token
        achieved = rates[f"course_lib {w}"]
        kernels = kernel_seconds_per_token(m, reps)
        step = 1 / achieved
        print(
            f"  {w:5s} {per_token / 1e6:9.1f} {limit:12.1f} {achieved:9.1f} "
            f"{achieved / limit:9.2f} "
            f"{step * 1e3:9.2f} {kernels * 1e3:11.2f} {(step - kernels) * 1e3:8.2f}"
        )
    print(
        f"  limit = read bandwidth {limit_bw:.1f} GB/s / MB per token (target: low-bit fraction "
        ">= 0.7)"
    )
    per_token = weight_bytes_per_token(model)
    achieved = rates["course_lib fp32"]
    print(
        f"  (torch's own float32 matrix-vector speed caps any float32 model at "
        f"{gemv_bw * 1e9 / per_token:.1f} tok/s here; fp32 achieved = "
        f"{achieved / (gemv_bw * 1e9 / per_token):.2f} of it)"
    )
    del models

    section(f"(b) KV cache vs no cache, wall time including prefill, {threads} thread(s)")
    for n in lengths:
        t = best_of(
            {
                "cache": lambda: ours_generate(model, ids, n, True),
                "no cache": lambda: ours_generate(model, ids, n, False),
            },
            1,
        )
        print(
            f"  {n:4d} new tokens: cache {t['cache']:6.2f} s, no cache {t['no cache']:6.2f} s, "
            f"no cache / cache = {t['no cache'] / t['cache']:5.2f}x",
            flush=True,
        )

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

    print(
        f"\nload average at end: {os.getloadavg()[0]:.2f}; total {time.perf_counter() - wall:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
