"""Hidden checks for notebook 04 (generation loop, KV cache, cost fits, beam search).

Expected values are the reference solutions' outputs (solutions/04_generation_loop), stored by
`python -m autograde release` in autograde/references/04_generation_loop.json. Inputs:
- `generate_loop`: the seeded tiny transformer (`course_lib.checks.generation_loop.tiny_lm`) on
batches of
  1-4 prompts of lengths 1-12, with EOS ids (0 among them), token stops and text stops (a toy
  tokenizer spelling each id as two letters, so two-token stop strings straddle a token boundary), a
  shifted step, max_new_tokens 0-9;
- `attend_with_cache`: random shapes (batch 1-3, 1-12 query heads, groups 1-4, T 1-6, 0-20 cached
  positions, head_dim 4-32), float32 and float64, and large scores (x 30, where a missing 1/sqrt
  scale or a missing max-subtraction shows); and real sizes (SmolLM2's 9/3 heads with hd 64, 100-300
  cached positions, T up to 8, groups 5, 8 and 9) whose expected values a second implementation
  computes (`_attention_truth`);
- `kv_cache_bytes`: other models and precisions (GPT-2 small, Mistral-7B-like, batch sizes, int8);
- `weight_bytes`: other formats (fp16, int8 with a scale per row, 2/3/5/6-bit with groups of
16-256),
  seeded random sizes, and the promised errors on sizes that do not fit (with and without
  group_bytes);
- `fit_exponent`: seeded noisy power laws (multiplicative noise, 4-40 points, exponents 0-3), a bend
after 9 points;
- `beam_search`: seeded random bigram tables (V = 6, two near-uniform rows) with widths 1-4, lengths
1-5,
  length penalties 0, 0.6, 1, 1.5; and an EOS id of 0.
"""

from __future__ import annotations

import torch

from autograde.hidden._twins import attention_features, twins
from course_lib.checks import generation_loop as _visible
from course_lib.checks import toy_inputs  # noqa: F401 - registers the toy tokenizers and tables
from course_lib.checks.engine import (
    Case,
    Check,
    Contract,
    Generator,
    Resource,
    allclose,
    raises_case,
)
from course_lib.checks.generation_loop import (
    NEXT_V,
    attention_inputs,
    attention_out,
    beam_result,
    generations,
    int_exact,
)

ASSIGNMENT = "04_generation_loop"


def _gen_cases() -> list[Case]:
    """The hidden cases of generate_loop, each with why it is there.

    Why long: a list of cases read one at a time, in the order of the stored references."""
    lm, g, tok = Resource("nb04_tiny_lm"), Resource("nb04_greedy"), Resource("nb04_pair_tokenizer")
    rng = torch.Generator().manual_seed(7)
    cases = []
    for i in range(8):
        B = int(torch.randint(1, 5, (), generator=rng))
        prompts = [
            torch.randint(
                0, 256, (int(torch.randint(1, 13, (), generator=rng)),), generator=rng
            ).tolist()
            for _ in range(B)
        ]
        n = int(torch.randint(0, 10, (), generator=rng))
        kw = {}
        if i % 2 == 0:
            kw["eos_id"] = int(torch.randint(0, 256, (), generator=rng))
        if i in (1, 4, 5, 7):  # text stops: two letters across a boundary, and one inside a token
            pair = ["ab", "ba", "cd", "q"][i % 4]
            kw.update(
                stop_sequences=[pair, "zz", [int(torch.randint(0, 256, (), generator=rng))]],
                tokenizer=tok,
            )
        cases.append(
            Case((lm, prompts, n, g), kw, label=f"tiny model, batch {B}, {n} tokens, {sorted(kw)}")
        )
    cases.append(
        Case(
            (lm, [[5, 17], [1, 2, 3, 4, 5, 6, 7, 8, 9]], 6, Resource("nb04_shifted_step")),
            label="tiny model, shifted step, batch of lengths 2 and 9",
        )
    )
    cases.append(
        Case(
            (lm, [[200, 3, 99, 41, 7]], 8, g),
            dict(stop_sequences=[[117, 180]], eos_id=84),
            label="tiny model, token stop [117, 180] comes before EOS 84",
        )
    )
    cases.append(
        Case(
            (lm, [[200, 3, 99, 41, 7], [5, 17]], 8, Resource("nb04_needs_generator")),
            dict(generator=Generator(3), eos_id=84),
            label="generator passed on, batch of 2",
        )
    )
    # Text stops that only appear when several tokens are decoded together: with one letter per
    # token, the stop is the letters of greedy tokens 3 and 4 of a row (found with
    # course_lib.generate), so it straddles.
    prompts = [[5, 17], [200, 3, 99, 41, 7], [1, 2, 3, 4, 5, 6, 7, 8, 9]]
    from course_lib.checks.engine import _resolve
    from course_lib.generate import generate

    outs = generate(_resolve(lm, {}), prompts, 6, stop_tokens=(), progress=False)
    letter = toy_inputs._letter_tokenizer()
    for r, o in enumerate(outs):
        stop = letter.decode(o[2:4])
        cases.append(
            Case(
                (lm, prompts, 8, g),
                dict(stop_sequences=[stop], tokenizer=Resource("nb04_letter_tokenizer")),
                label=f"one letter per token, text stop {stop!r} straddling tokens 3-4 of row {r}",
            )
        )
    cases.append(
        Case(
            (lm, [[10, 20, 30]], 9, g),
            dict(stop_sequences=["nosuch", [1, 1, 1]], tokenizer=tok),
            label="stops that never occur: runs to max_new_tokens",
        )
    )
    # issue 38: a text stop completed inside a token that carries more text: two letters per token,
    # the stop is the second letter of new token 3 and the first of new token 4, so the decoded text
    # goes on one letter past it (an answer testing decoded.endswith(stop) never stops); token 4
    # completes it and is returned
    pair = toy_inputs._pair_tokenizer()
    outs_pair = generate(_resolve(lm, {}), prompts[:2], 6, stop_tokens=(), progress=False)
    for r, o in enumerate(outs_pair):
        stop = pair.decode(o[2:4])[1:3]
        cases.append(
            Case(
                (lm, prompts[:2], 8, g),
                dict(stop_sequences=[stop], tokenizer=tok),
                label=f"two letters per token, text stop {stop!r} completed inside new token 4 of "
                f"row {r} "
                "(one letter more follows it)",
            )
        )
    # a one-token stop sequence: row 1's third greedy token
    cases.append(
        Case(
            (lm, prompts, 8, g),
            dict(stop_sequences=[[outs[1][2]]]),
            label=f"one-token stop sequence [{outs[1][2]}] (row 1's third new token)",
        )
    )
    # which rule decides (the text: EOS first; EOS or a stop on the last allowed token is not
    # "length")
    nxt = Resource("nb04_next_id_lm")
    cases += [
        Case((nxt, [[3]], 3, g), dict(eos_id=6), label="EOS on the last allowed token"),
        Case(
            (nxt, [[3]], 3, g),
            dict(stop_sequences=[[5, 6]]),
            label="a stop completed by the last allowed token",
        ),
        Case(
            (nxt, [[3]], 10, g),
            dict(eos_id=6, stop_sequences=[[5, 6]]),
            label="the EOS token would also complete a stop sequence",
        ),
    ]
    # a text stop that only the bytes of several tokens decode to (a blind class decoded token by
    # token)
    cases.append(
        Case(
            (Resource("nb04_llama_lm"), [[ord("h")]], 10, g),
            dict(stop_sequences=["\U0001f999"], tokenizer=Resource("nb04_byte_tokenizer")),
            label="byte tokens: the text stop (a llama emoji) is 4 tokens, none a character alone",
        )
    )
    # a text stop that the prompt already contains: only the new tokens count (ids 4 5 6 spell
    # "User:")
    cases.append(
        Case(
            (nxt, [[4, 5, 6]], 5, g),
            dict(stop_sequences=["User:"], tokenizer=Resource("nb04_toy_tokenizer")),
            label='the prompt itself spells the text stop "User:"',
        )
    )
    # the step receives the [B, V] logits of all rows at once (a step that reads across rows shows
    # it)
    cases.append(
        Case(
            (lm, [[5, 17], [200, 3, 99, 41, 7], [1, 2, 3]], 4, Resource("nb04_coupled_step")),
            label="a step that reads the whole batch: called once per token on [B, V]",
        )
    )
    # ... also after a row has finished: row 0 ends at EOS 31 after one token, rows 1 and 2 run on;
    # under a step that treats each row by its place in the batch, a loop that hands the step only
    # the running rows renumbers them (bug zoo: `generate_loop__step_on_running_rows_only`). The
    # step never reads a finished row's logits, which differ between correct loops.
    cases.append(
        Case(
            (lm, [[5, 17], [200, 3, 99, 41, 7], [1, 2, 3]], 6, Resource("nb04_ranked_step")),
            dict(eos_id=31),
            label="a step that numbers the rows, row 0 done first: still all B rows",
        )
    )
    # cost the text states: "stop the loop early when every row has finished" (the model counts its
    # calls)
    cases.append(
        Case(
            (Resource("nb04_next_id_lm_3calls"), [[3]], 10, g),
            dict(eos_id=6),
            label="every row done after 3 tokens of 10 allowed: no 4th model call",
        )
    )
    # `if eos_id and t == eos_id` never ends a row when the EOS id is 0 (a valid id; only None
    # disables; bug zoo: `generate_loop__eos_zero_is_falsy`)
    cases.append(
        Case(
            (nxt, [[14], [9, 10]], 4, g),
            dict(eos_id=0),
            label="eos_id=0: row 0 generates 15 then 0 and ends (reason eos); row 1 runs to length",
        )
    )
    # the text: "build `idx` and `mask` on the model's device" (bug zoo:
    # `generate_loop__ids_on_cpu`)
    cases.append(
        Case(
            (Resource("nb04_next_id_lm_second_device"), [[3], [7, 8]], 4, g),
            dict(eos_id=6),
            label="a model whose weights are on another device than the CPU, batch of 2",
        )
    )
    return cases


def _attention_cases() -> list[Case]:
    rng = torch.Generator().manual_seed(11)
    cases = []
    for i in range(10):
        nkv = int(torch.randint(1, 4, (), generator=rng))
        group = int(torch.randint(1, 5, (), generator=rng))
        B, T = (
            int(torch.randint(1, 4, (), generator=rng)),
            int(torch.randint(1, 7, (), generator=rng)),
        )
        past, hd = int(torch.randint(0, 21, (), generator=rng)), [4, 8, 16, 32][i % 4]
        dtype = torch.float64 if i % 3 == 2 else torch.float32
        scale = 30.0 if i in (4, 9) else 1.0
        args = attention_inputs(100 + i, B, nkv * group, nkv, T, past, hd, dtype=dtype, scale=scale)
        cases.append(
            Case(
                args,
                label=f"B={B} heads={nkv * group}/{nkv} T={T} past={past} hd={hd} {dtype} "
                f"x{scale:g}",
            )
        )
    # every allowed score is -2e10: masking with a large finite number (-1e9) instead of -inf would
    # win
    q, kn, vn, kc, vc = attention_inputs(120, 1, 4, 2, 3, 2, 4)
    cases.append(
        Case(
            (torch.full_like(q, 1e5), torch.full_like(kn, -1e5), vn, torch.full_like(kc, -1e5), vc),
            label="scores of -2e10 everywhere: masked entries must be -inf, not a large negative "
            "number",
        )
    )
    return cases + _attention_real_cases()


def _attention_truth(q, k_new, v_new, k_cache, v_cache) -> tuple:
    """(y, k_all, v_all) by a second implementation, not the reference: one query head at a time in
    float64, reading KV head h // group, keys 0 .. past + i allowed for new query i, softmax written
    out; y in the inputs' dtype."""
    k_all, v_all = torch.cat([k_cache, k_new], dim=2), torch.cat([v_cache, v_new], dim=2)
    B, H, T, hd = q.shape
    S, group = k_all.shape[2], H // k_all.shape[1]
    allowed = torch.arange(S)[None, :] <= (S - T) + torch.arange(T)[:, None]  # (T, S)
    y = torch.empty(B, H, T, hd, dtype=torch.float64)
    for h in range(H):
        k, v = k_all[:, h // group].double(), v_all[:, h // group].double()  # (B, S, hd)
        s = (q[:, h].double() @ k.transpose(-1, -2) / hd**0.5).masked_fill(~allowed, float("-inf"))
        w = torch.exp(s - s.amax(dim=-1, keepdim=True))
        y[:, h] = (w / w.sum(dim=-1, keepdim=True)) @ v
    return y.to(q.dtype), k_all.clone(), v_all.clone()


# Attention over only the last 24 cached positions, and heads tiled for groups above 4, kept full
# points when every case had <= 20 cached positions and groups <= 4 (bug zoo:
# `attend_with_cache__last_24_cached_only`, `attend_with_cache__tiles_large_groups`). Real sizes:
# SmolLM2's layout (9 query heads, 3 KV heads, head_dim 64) with hundreds of cached positions,
# chunks of up to 8, a group of 9 (one KV head), groups of 8 and 5 over several KV heads (where
# tiling and expanding in a row differ). Expected values by construction (_attention_truth), so
# nothing is stored: k_all alone would be 100-300 KB a case.
REAL_ATTENTION = [  # (seed, B, nh, nkv, T, past, hd, dtype)
    (130, 1, 9, 3, 1, 300, 64, torch.float32),  # SmolLM2 decode step, 300 cached
    (131, 1, 9, 3, 8, 200, 64, torch.float32),  # SmolLM2 chunk of 8 after 200
    (132, 2, 9, 1, 4, 120, 32, torch.float32),  # group 9 over one KV head
    (133, 1, 16, 2, 3, 150, 16, torch.float32),  # group 8 over 2 KV heads
    (134, 1, 15, 3, 2, 100, 8, torch.float64),  # group 5 over 3 KV heads, float64
]


def _attention_real_cases() -> list[Case]:
    cases = []
    for seed, B, nh, nkv, T, past, hd, dtype in REAL_ATTENTION:
        args = attention_inputs(seed, B, nh, nkv, T, past, hd, dtype=dtype)
        cases.append(
            Case(
                args,
                label=f"real size: B={B} heads={nh}/{nkv} (group {nh // nkv}) T={T} past={past} "
                f"hd={hd} {str(dtype).removeprefix('torch.')}",
                expected=_attention_truth(*args),
            )
        )
    return cases


def _kv_cases() -> list[Case]:
    return [
        Case((12, 12, 12, 64, 1024, 4), label="GPT-2 small, 1024 tokens, fp32"),
        Case(
            (32, 32, 8, 128, 32768, 2),
            dict(batch_size=4),
            label="Mistral-7B-like, 32k tokens, fp16, batch 4",
        ),
        Case((30, 9, 3, 64, 2048, 1), dict(batch_size=16), label="SmolLM2, int8 cache, batch 16"),
        Case((80, 64, 8, 128, 1, 2), label="70B, one token"),
        Case((2, 4, 2, 16, 0, 4), label="no tokens yet"),
    ]


def _weight_bytes_cases() -> list[Case]:
    rng = torch.Generator().manual_seed(2024)
    cases = [
        Case((124_439_808, 16), label="GPT-2 small in float16"),
        Case((4096 * 4096, 8, 4096, 2), label="int8 with one float16 scale per 4096-wide row"),
        Case((4096 * 11008, 2, 16, 4), label="2-bit, groups of 16, two float16 per group"),
        Case((8192 * 8192, 3, 256, 2), label="3-bit, groups of 256"),
        Case((64, 6, 64, 0), label="6-bit, one group, no overhead"),
        Case((1, 8), label="one int8 weight"),
    ]
    for _ in range(6):
        bits = int(torch.randint(1, 9, (), generator=rng))
        group = 2 ** int(torch.randint(4, 9, (), generator=rng))
        n = group * 8 * int(torch.randint(1, 5000, (), generator=rng))  # whole groups, whole bytes
        cases.append(
            Case(
                (n, bits, group, int(torch.randint(0, 9, (), generator=rng))),
                label=f"{n} weights, {bits}-bit, groups of {group}",
            )
        )
    return cases + (
        raises_case("ValueError", 100, 8, 64, 2, label="100 weights in groups of 64")
        + raises_case("ValueError", 5, 3, label="5 x 3 bits = 15 bits")
        + raises_case("ValueError", 64, -4, label="negative bits")
        + raises_case("ValueError", 64, 4, 0, 2, label="group size 0")
        # the group checks skipped when group_bytes is 0 (the text: whatever group_bytes is; bug
        # zoo: `weight_bytes__group_checks_only_with_group_bytes`)
        + raises_case("ValueError", 64, 4, 0, 0, label="group size 0, group_bytes 0")
        + raises_case("ValueError", 64, 4, -8, 0, label="group size -8, group_bytes 0")
        + raises_case(
            "ValueError", 100, 8, 64, 0, label="100 weights in groups of 64, group_bytes 0"
        )
        + [
            Case((4096, 4, 32), label="groups given, group_bytes left at its default 0"),
            Case((64, 8, None, 2), label="group_bytes given without groups: no overhead"),
            Case((16, 8, 1, 2), label="groups of 1: one scale per weight"),
        ]
    )


def _fit_cases() -> list[Case]:
    rng = torch.Generator().manual_seed(5)
    cases = []
    for i in range(6):
        k = int(torch.randint(4, 10, (), generator=rng))
        ns = (2.0 ** torch.arange(k, dtype=torch.float64) * 16).tolist()
        a = float(torch.rand((), generator=rng, dtype=torch.float64) * 3)
        noise = torch.exp(torch.randn(k, generator=rng, dtype=torch.float64) * 0.2)
        ts = (1e-4 * torch.tensor(ns, dtype=torch.float64) ** a * noise).tolist()
        cases.append(Case((ns, ts), label=f"{k} points, exponent ~{a:.2f}, 20% noise"))
    # sizes close together: log(1001) - log(1000) = 1e-3 needs float64 (float32 keeps ~4 digits of
    # it)
    ns = [1000.0, 1001.0, 1002.0, 1003.0, 1004.0]
    cases.append(
        Case((ns, [1e-6 * n**2 for n in ns]), label="n = 1000..1004, time = 1e-6 n^2: exponent 2")
    )
    return cases + _fit_real_cases()


def _fit_real_cases() -> list[Case]:
    """A slope over the first 9 points kept full points when no case had more (bug zoo:
    `fit_exponent__first_9_points_only`). Longer noisy series
    (timings of a sweep), and a cost that bends after its 9th point (linear, then quadratic: slope
    247/170)."""
    rng, cases = torch.Generator().manual_seed(6), []
    for k in (12, 24, 40):
        ns = torch.linspace(1, 3, k, dtype=torch.float64).exp().mul(100).round().tolist()
        a = float(torch.rand((), generator=rng, dtype=torch.float64) * 3)
        noise = torch.exp(torch.randn(k, generator=rng, dtype=torch.float64) * 0.2)
        cases.append(
            Case(
                (ns, (1e-5 * torch.tensor(ns, dtype=torch.float64) ** a * noise).tolist()),
                label=f"{k} points, exponent ~{a:.2f}, 20% noise",
            )
        )
    ns = [float(2**i) for i in range(16)]
    cases.append(
        Case(
            (ns, [n if i < 9 else n * n / 256 for i, n in enumerate(ns)]),
            label="16 points: time = n for the first 9, n^2 / 256 after",
        )
    )
    return cases


def _beam_cases() -> list[Case]:
    cases = []
    for i, (b, n, alpha, start) in enumerate(
        [
            (1, 4, 1.0, 0),
            (2, 4, 1.0, 1),
            (3, 5, 1.0, 2),
            (4, 3, 0.6, 3),
            (2, 5, 0.0, 4),
            (3, 4, 1.5, 5),
            (2, 1, 1.0, 0),
            (4, 5, 1.0, 1),
        ]
    ):
        eos = 5
        cases.append(
            Case(
                (Resource(f"nb04_table_{i % 4}"), [start], b, n, eos),
                dict(length_penalty=alpha),
                label=f"random table {i % 4}, width {b}, {n} tokens, length_penalty {alpha}, "
                f"start {start}",
            )
        )
    cases.append(
        Case(
            (Resource("nb04_table_s11"), [5], 2, 4, 5),
            dict(length_penalty=1.0),
            label="table s11, width 2: finished candidates keep their beam slots (no refill)",
        )
    )
    # `if eos_id and toks[-1] == eos_id` never finishes a hypothesis when the EOS id is 0 (bug zoo:
    # `beam_search__eos_zero_is_falsy`); here the
    # best one is [4, 0] (avg log p -0.33; unfinished [4, 0, 1, 5] would score -0.49)
    cases.append(
        Case(
            (Resource("nb04_table_2"), [3], 2, 4, 0),
            dict(length_penalty=1.0),
            label="random table 2, width 2, 4 tokens, eos_id=0: the best hypothesis ends with "
            "EOS 0",
        )
    )
    # issue 38: the text bounds beam_width by nothing: a beam as wide as the vocabulary (6 tokens)
    # and wider (9: the first step has only 6 candidates, so a top-k over them asks for more than
    # there are)
    for b in (6, 9):
        cases.append(
            Case(
                (Resource("nb04_table_1"), [2], b, 3, 5),
                dict(length_penalty=1.0),
                label=f"random table 1, width {b} on a 6-token vocabulary, 3 tokens",
            )
        )
    # the text: "build `idx` on the model's device" (bug zoo: `beam_search__ids_on_cpu`)
    cases.append(
        Case(
            (Resource("nb04_table_1_second_device"), [2], 2, 3, 5),
            dict(length_penalty=1.0),
            label="random table 1 whose weights are on another device than the CPU, width 2, 3 "
            "tokens",
        )
    )
    return cases


CHECKS = [
    Check(
        name="generate_loop_hidden",
        exercise="generate_loop",
        cases=_gen_cases,
        compare=generations,
        hint="Compare with the visible check's cases: padding + mask, per-row finished flags, "
        "stops on new tokens.",
    ),
    Check(
        name="attend_with_cache_hidden",
        exercise="attend_with_cache",
        cases=_attention_cases,
        contract=Contract(meta=True, any_float=True),  # "any float dtype may come back"
        forbidden=(
            "torch.nn.functional.scaled_dot_product_attention",
            "torch.nn.MultiheadAttention",
            # what nn.MultiheadAttention.forward runs (white-box red team 24, E2)
            "torch.nn.functional.multi_head_attention_forward",
            # the library's layers that hold one as an attribute (white-box red team 25, E11:
            # TransformerEncoderLayer(...).self_attn)
            "torch.nn.TransformerEncoderLayer",
            "torch.nn.TransformerDecoderLayer",
            "torch.nn.TransformerEncoder",
            "torch.nn.TransformerDecoder",
            "torch.nn.Transformer",
        ),
        compare=attention_out(rtol=1e-4, atol=1e-5),
    ),
    Check(
        name="kv_cache_bytes_hidden", exercise="kv_cache_bytes", cases=_kv_cases, compare=int_exact
    ),
    Check(
        name="weight_bytes_hidden",
        exercise="weight_bytes",
        cases=_weight_bytes_cases,
        compare=int_exact,
    ),
    Check(
        name="fit_exponent_hidden",
        exercise="fit_exponent",
        cases=_fit_cases,
        contract=Contract(number=True),
        compare=allclose(rtol=1e-6, atol=1e-6),
    ),
    Check(
        name="beam_search_hidden", exercise="beam_search", cases=_beam_cases, compare=beam_result()
    ),
]


# Visible checks in disguise: outside the kernel their points need these too
# (autograde/hidden/_twins.py). attend_with_cache(q, k_new, v_new, k_cache, v_cache)
# generate_loop on the next-id model (after id i, id (i + 1) % 16): every id shifted by one secret c
# modulo 16 (the prompts, eos_id and token stop sequences) shifts the generation by c and changes
# nothing else. Text stops and the tiny transformer have no such symmetry: left out.
def _shift_ids(args: tuple, kwargs: dict, rng) -> tuple[tuple, dict]:
    c = rng.randrange(1, NEXT_V)
    shift = lambda i: (i + c) % NEXT_V  # noqa: E731
    kw = dict(kwargs)
    if kw.get("eos_id") is not None:
        kw["eos_id"] = shift(kw["eos_id"])
    if "stop_sequences" in kw:
        kw["stop_sequences"] = [[shift(i) for i in s] for s in kw["stop_sequences"]]
    return (args[0], [[shift(i) for i in row] for row in args[1]], *args[2:]), kw


def _not_shift_symmetric(case: Case) -> bool:
    model = case.args[0] if case.args else None
    return (
        not isinstance(model, Resource)
        or model.name not in ("nb04_next_id_lm", "nb04_next_id_lm_3calls")
        or "tokenizer" in case.kwargs
        or any(isinstance(s, str) for s in case.kwargs.get("stop_sequences", []))
    )


CHECKS += twins(
    _visible.CHECKS,
    {
        "attend_with_cache": {"kind": attention_features((0, 1, 3), (2, 4))},
        "generate_loop": {"kind": _shift_ids, "skip": _not_shift_symmetric},
    },
)
