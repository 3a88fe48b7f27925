"""Each graded exercise's domain, from the student notebook's text alone (issue 38): what each
argument may be, what comes back, the text's own edge cases quoted verbatim, and every stated
property with the case that checks it ("check: label substring"; "contract X" names an
engine-derived guarantee).

Instructor-only (it names hidden cases): kept out of course_lib, which students receive;
autograde/tests/ test_domains.py finds every quote in the notebook and every named case in its
check."""

from __future__ import annotations

DOMAINS: dict[str, dict] = {}

# pipeline_trace (course_lib/checks/pipeline_trace.py)
DOMAINS["pipeline_trace"] = {
    "token_pieces": {
        "args": {
            "enc": "any tiktoken.Encoding (cl100k_base or SmolLM2's)",
            "text": "any str whose bytes enc can encode: empty, emoji (a token may hold part of a "
            "character), any Unicode normal form, leading spaces, trailing newlines",
        },
        "returns": "list[bytes] joining to text.encode('utf-8')",
        "text": (
            '`b"".join(token_pieces(enc, text)) == text.encode("utf-8")`',
            '`""` has no tokens',
        ),
        "properties": {
            "exact bytes (emoji split)": "token_pieces: the emoji is split",
            "empty": "token_pieces: the empty string has no tokens",
            "Unicode normal forms": "token_pieces_hidden: cafe\u0301",
            "compatibility forms": "token_pieces_hidden: \ufb01ne",
            "leading space, trailing newline": "token_pieces_hidden: ' hello world\\n'",
            "determinism": "token_pieces: [called twice]",
        },
    },
    "tokens_per_word": {
        "args": {"enc": "as token_pieces", "text": "str with at least one word"},
        "returns": "Python float",
        "text": (
            "A word is a\nmaximal run of non-whitespace characters",
            "You may\nassume the text has at least one word",
        ),
        "properties": {
            "a float": "tokens_per_word: contract number",
            "any whitespace separates": "tokens_per_word: words are separated by any run of "
            "whitespace",
            "Unicode normal forms": "tokens_per_word_hidden: cafe\u0301",
            "leading space, trailing newline": "tokens_per_word_hidden: ' hello world\\n'",
            "determinism": "tokens_per_word: [called twice]",
        },
    },
    "run_embedding_layer": {
        "args": {
            "token_ids": "long [B, T], T <= max_seq_len",
            "tables": "(vocab_size, d_model), (max_seq_len, d_model)",
        },
        "returns": "[B, T, d_model]: token row + position row",
        "text": (
            "positions counted from 0 in every row",
            "Create the positions on the ids' device",
        ),
        "properties": {
            "exact sum": "embedding_layer: token row + position row, exactly",
            "T = max_seq_len": "embedding_layer_hidden: tables (200, 16) and (64, 16), ids (1, 64)",
            "device": "embedding_layer_hidden: [inputs on the meta device]",
            "determinism": "embedding_layer: [called twice]",
        },
    },
    "embedding_bytes": {
        "args": {
            "vocab_size": "int >= 1",
            "d_model": "int >= 1",
            "bytes_per_value": "4, 2, 1, 0.5, 8",
        },
        "returns": "a number of bytes (products beyond 2^24: exact, Python arithmetic)",
        "text": ("Return\nbytes, not GB", "0.5 for 4-bit weights"),
        "properties": {
            "bytes, not GB": "embedding_bytes: the notes' 100K x 12288 x 2 bytes",
            "half-byte values": "embedding_bytes_hidden: 3 x 5 x 0.5 bytes",
            "products beyond 2^24": "embedding_bytes_hidden: 256000 x 3072 x 2 bytes",
            "determinism": "embedding_bytes: [called twice]",
        },
    },
    "causal_mask": {
        "args": {"T": "int >= 1"},
        "returns": "torch.bool [T, T], True on and below the diagonal",
        "text": ("Return a `torch.bool` tensor of shape `[T, T]`",),
        "properties": {
            "T = 1": "causal_mask: T=1: [[True]]",
            "True = may attend": "causal_mask: T=4: True on and below the diagonal",
            "determinism": "causal_mask: [called twice]",
        },
    },
    "causal_attention": {
        "args": {
            "q, k": "float [..., T, d] (any number of leading dims)",
            "v": "float [..., T, d_v]; the text says d_v may differ from d but that the checks "
            "use d_v = d",
        },
        "returns": "[..., T, d_v], the inputs' dtype, on their device",
        "text": (
            "`d_v` may differ from\n  `d`",
            "its weight is exactly 0",
            "the inputs may live on any device (a GPU too): your mask must be on the same one",
        ),
        "properties": {
            "future invariance": "causal_attention: 2 sequences equal up to position 2",
            "masked weight exactly 0": "causal_attention_hidden: masked entries must be -inf",
            "float64 (dtype kept)": "causal_attention: float64 [2, 6, 8]",
            "4-D batch": "causal_attention: 4-D [batch 2, heads 3, T 5, d 8]",
            "device": "causal_attention_hidden: [inputs on the meta device]",
            "determinism": "causal_attention: [called twice]",
            "no mutation": "causal_attention: contract no_mutation",
        },
    },
    "top_k_next_tokens": {
        "args": {
            "model": "model(idx) -> [B, T, V] on any device",
            "tok": "encode(prompt)",
            "prompt": "str",
            "k": "1 <= k <= V (default 10)",
        },
        "returns": "list of (int, float) pairs, most likely first, not renormalised",
        "text": (
            "They are not renormalised over the `k` you keep",
            "computed in float32",
            "on a batch of one sequence **on the model's device**",
        ),
        "properties": {
            "not renormalised": "top_k_next_tokens: toy model, after token 3: p = 128/255",
            "k = V": "top_k_next_tokens: k = V = 8: the whole distribution",
            "float32 from bfloat16 logits": "top_k_next_tokens_hidden: toy model with bfloat16 "
            "logits",
            "prompt ending in a space": "top_k_next_tokens_hidden: a prompt ending in a space",
            "ids on the model's device": "top_k_next_tokens_hidden: weights are on another device "
            "than the CPU",
            "determinism": "top_k_next_tokens: [called twice]",
        },
    },
    "positions_without_cache": {
        "args": {"prompt_len": "int >= 1", "n_new": "int >= 0"},
        "returns": "int",
        "text": ("0 new tokens cost 0", "the last token generated is never fed back"),
        "properties": {
            "0 new tokens": "positions_without_cache: no new tokens, no passes",
            "an integer": "positions_without_cache: prompt 200, 256 new tokens",
            "determinism": "positions_without_cache: [called twice]",
        },
    },
}

# logits_softmax (course_lib/checks/logits_softmax.py)
DOMAINS["logits_softmax"] = {
    "softmax": {
        "args": {
            "logits": "float32/float64 [..., V] (any batch shape); -inf entries; >= 1 finite "
            "entry per row; any magnitude (rows of all large negative logits included)"
        },
        "returns": "probabilities, the input's dtype",
        "text": (
            "float32 in → float32 out, float64 in → float64 out",
            "no NaN for `[1000., 999.]`",
            "entries equal to `-inf` (masked tokens) get probability exactly 0",
            "every row has at least one finite logit",
        ),
        "properties": {
            "dtype kept (float64)": "softmax: float64 input of shape [2, 3, 5]",
            "-inf gets exactly 0": "softmax: -inf logit gets probability 0",
            "overflow": "softmax: exp(500) overflows float32",
            "rows of all large negative logits": "softmax_hidden: each row shifted by a different "
            "offset (0 ... 1000)",
            "determinism": "softmax: [called twice]",
            "no mutation": "softmax: contract no_mutation",
        },
    },
    "log_softmax": {
        "args": {"logits": "as softmax"},
        "returns": "log-probabilities, the input's dtype",
        "text": ("a `-inf` logit gives `-inf`", "`[0, -1000]` for `[1000., 0.]`"),
        "properties": {
            "underflow": "log_softmax: [0, -200]: softmax underflows to 0",
            "-inf stays -inf": "log_softmax: -inf logit stays -inf",
            "dtype kept (float64)": "log_softmax: float64 input of shape [2, 3, 5]",
            "rows of all large negative logits": "log_softmax_hidden: each row shifted by a "
            "different offset",
            "determinism": "log_softmax: [called twice]",
            "no mutation": "log_softmax: contract no_mutation",
        },
    },
    "probs_at_temperature": {
        "args": {
            "logits": "float32/float64 [..., V]",
            "T": "float or int >= 0; any T > 0 with logits / T finite",
        },
        "returns": "probabilities, the input's dtype (float64 accuracy for float64)",
        "text": (
            "split the probability **evenly** among them",
            "including tiny ones such as 1e-6",
            "a float64 input gets float64 accuracy",
        ),
        "properties": {
            "T = 0 exact one-hot": "probs_at_temperature: T=0 is greedy: exact one-hot",
            "ties split evenly": "probs_at_temperature_hidden: T=0 with ties",
            "tiny T": "probs_at_temperature_hidden: tiny T=1e-6",
            "float64 accuracy": "probs_at_temperature_hidden: T=0 with ties, float64",
            "ValueError": "probs_at_temperature: T=-1 must raise ValueError",
            "float64 at T=0 (visible)": "probs_at_temperature: float64 logits at T=0",
            "determinism": "probs_at_temperature: [called twice]",
            "no mutation": "probs_at_temperature: contract no_mutation",
        },
    },
    "entropy": {
        "args": {"probs": "float32/float64 [..., V], exact zeros allowed"},
        "returns": "nats [...] (0-dim for one distribution); the text fixes no dtype (a float64 "
        "result is accepted)",
        "text": (
            "No NaN for probabilities that are exactly 0",
            "a 0-dim tensor for a single\ndistribution",
        ),
        "properties": {
            "zeros": "entropy_hidden: [3, 6] with exact zeros",
            "float64": "entropy: float64 batch [3, 5] with a zero",
            "determinism": "entropy: [called twice]",
            "no mutation": "entropy: contract no_mutation",
        },
    },
    "sequence_logprob": {
        "args": {
            "model": "[B, T] ids -> [B, T, V] logits, any device",
            "tok": "encode(text) -> ids",
            "text": "str",
        },
        "returns": "Python float",
        "text": (
            "as a Python `float`",
            "fewer than 2 tokens (nothing to score) raise `ValueError`",
            "on a batch of one sequence on the model's device",
        ),
        "properties": {
            "a float": "sequence_logprob: contract number",
            "ValueError": "sequence_logprob: one token: nothing to score, must raise ValueError",
            "real model": "sequence_logprob_hidden: SmolLM2",
            "ids on the model's device": "sequence_logprob_hidden: weights are on another device "
            "than the CPU",
            "without gradients (visible)": "sequence_logprob: refuses to run with gradients on",
            "one forward pass (visible)": "sequence_logprob: one pass over the whole text",
            "determinism": "sequence_logprob: [called twice]",
        },
    },
    "perplexity": {
        "args": {
            "model": "as sequence_logprob",
            "tok": "as sequence_logprob",
            "text": "str, >= 2 tokens",
        },
        "returns": "Python float",
        "text": ("as a Python\n`float`",),
        "properties": {
            "a float": "perplexity: contract number",
            "exact on a uniform model": "perplexity: uniform toy model: perplexity = V = 8",
            "determinism": "perplexity: [called twice]",
        },
    },
}

# sampling (course_lib/checks/sampling.py)
DOMAINS["sampling"] = {
    "greedy": {
        "args": {
            "logits": "float16/bfloat16/float32/float64 [..., V] (any batch shape); -inf allowed"
        },
        "returns": "long ids [...]: a 0-dim tensor for [V]",
        "text": (
            "**Ties** go to the **lowest** id",
            "any batch shape; float16/bfloat16 inputs too",
        ),
        "properties": {
            "dtype long": "greedy: [2.0, 1.0, 0.5, 0.1] -> 0 (a 0-dim tensor)",
            "ties to the lowest id": "greedy: tie between ids 1 and 2 -> the lowest id, 1",
            "half precision": "greedy: bfloat16 batch",
            "real vocabulary": "greedy_hidden: float32 [2, 49152]",
            "determinism": "greedy: [called twice]",
            "no mutation": "greedy: contract no_mutation",
        },
    },
    "sample": {
        "args": {
            "probs": "float32/float64 [..., V], rows >= 0 summing to 1 up to rounding; exact zeros",
            "generator": "torch.Generator: the only source of randomness",
        },
        "returns": "long ids [...]",
        "text": (
            "dtype `torch.long`",
            "Tokens with probability 0 must never be returned",
            "drawn independently for every row with `generator`",
        ),
        "properties": {
            "dtype long": "sample_hidden: contract long ids",
            "zeros never drawn": "sample: zeros are never drawn",
            "rows independent": "sample_hidden: consecutive rows independent",
            "only the generator": "sample: contract generator",
            "determinism (same seed)": "sample: [called twice]",
            "real vocabulary tail": "sample_hidden: a quarter below 1e-5",
            "u at the top (rounding)": "sample_hidden: float32 u = 1 - 2^-24",
            "no mutation": "sample: contract no_mutation",
        },
    },
    "top_k_filter": {
        "args": {
            "logits": "float16/bfloat16/float32/float64 [..., V]",
            "k": "positive int; k >= V allowed",
        },
        "returns": "new tensor, same shape and dtype; removed = -inf",
        "text": ("`k >= V` keeps everything (no error)", "never modify `logits` in place"),
        "properties": {
            "dtype kept": "top_k_filter: float16 stays float16",
            "k > V": "top_k_filter: k > V keeps every token (no error)",
            "ties at the k-th kept": "top_k_filter: tie at the k-th value",
            "ValueError": "top_k_filter: k=0 must raise ValueError",
            "non-integer k": "top_k_filter_hidden: k=2.5 must raise ValueError",
            "real vocabulary": "top_k_filter_hidden: [1, 49152], k=128",
            "non-integer k (visible)": "top_k_filter: k=2.5 (not an integer) must raise ValueError",
            "determinism": "top_k_filter: [called twice]",
            "no mutation": "top_k_filter: contract no_mutation",
        },
    },
    "top_p_filter": {
        "args": {
            "logits": "float16/bfloat16/float32/float64 [..., V]",
            "p": "[0, 1]",
            "min_tokens_to_keep": "positive int",
        },
        "returns": "new tensor, same shape and dtype",
        "text": (
            "`p == 1` keeps every token; `p == 0` keeps only `min_tokens_to_keep`",
            "keep exactly `min_tokens_to_keep`: any of the tied ones will do",
        ),
        "properties": {
            "mass before reaches p": "top_p_filter: 0.5 already reaches p, keep ONE token",
            "p == 1": "top_p_filter: p=1 keeps every token",
            "p == 0": "top_p_filter: p=0: only min_tokens_to_keep=1 token",
            "dtype kept": "top_p_filter: (stays float16)",
            "all large negative": "top_p_filter_hidden: all near -1e4",
            "overflow": "top_p_filter: exp(1e4) overflows unless you subtract the max",
            "ValueError": "top_p_filter: p=1.5 must raise ValueError",
            "real vocabulary": "top_p_filter_hidden: a nucleus of 4100 tokens",
            "determinism": "top_p_filter: [called twice]",
            "no mutation": "top_p_filter: contract no_mutation",
        },
    },
    "min_p_filter": {
        "args": {
            "logits": "float16/bfloat16/float32/float64 [..., V]",
            "min_p": "[0, 1]",
            "min_tokens_to_keep": "positive int",
        },
        "returns": "new tensor, same shape and dtype",
        "text": (
            "with equal to the threshold kept",
            "`min_p = 0` keeps all; `min_p = 1` keeps the top token(s)",
            "a softmax computed in float32 or float64, not the logit form above",
        ),
        "properties": {
            "equal kept": "min_p_filter: min_p=1 with three tied top tokens",
            "equal kept below the top": "min_p_filter_hidden: the token at exactly min_p * p_max "
            "is kept",
            "probabilities, not the logit form": "min_p_filter_hidden: float32 logits near 1e4",
            "relative to p_max": "min_p_filter: relative to p_max, not absolute",
            "probabilities in float32, not bfloat16": "min_p_filter_hidden: probabilities in "
            "float32, not bfloat16",
            "all large negative": "min_p_filter_hidden: all near -1e4",
            "dtype kept": "min_p_filter: float16 stays float16",
            "ValueError": "min_p_filter: min_p=-0.1 must raise ValueError",
            "real vocabulary": "min_p_filter_hidden: float32 [2, 49152], min_p=0.05",
            "equal kept below the top (visible)": "min_p_filter: the token at exactly min_p * "
            "p_max is kept",
            "probabilities, not the logit form (visible)": "min_p_filter: compared as "
            "probabilities",
            "determinism": "min_p_filter: [called twice]",
            "no mutation": "min_p_filter: contract no_mutation",
        },
    },
    "apply_temperature": {
        "args": {"logits": "float16/bfloat16/float32/float64 [..., V]", "T": "float or int >= 0"},
        "returns": "new tensor, dtype kept",
        "text": (
            "greedy **without dividing**",
            "several tied maxima all keep their value",
            "$T < 0$: raise `ValueError`",
        ),
        "properties": {
            "T = 0 without division": "apply_temperature: T=0: greedy, the top logit keeps its "
            "value",
            "tied maxima": "apply_temperature: T=0 with a tie: both top tokens stay",
            "tiny T divides": "apply_temperature_hidden: T=1e-05",
            "dtype kept": "apply_temperature: float16 stays float16",
            "float64 accuracy": "apply_temperature_hidden: float64 [5], T=1e-06",
            "ValueError": "apply_temperature: T=-1 must raise ValueError",
            "determinism": "apply_temperature: [called twice]",
            "no mutation": "apply_temperature: contract no_mutation",
        },
    },
    "penalize_repeats": {
        "args": {
            "logits": "float16/bfloat16/float32/float64 [..., V]",
            "previous_ids": "long [..., L] or a Python list; L may be 0",
            "penalty": "> 0",
        },
        "returns": "new tensor, dtype kept, on logits' device",
        "text": (
            "once per token, however many times it appeared",
            "`L` may be 0",
            "an empty list is an empty history",
            "`device=logits.device`",
        ),
        "properties": {
            "once per token": "penalize_repeats: a token seen 3 times is penalised once",
            "empty history": "penalize_repeats_hidden: an empty history: nothing is penalised",
            "list input": "penalize_repeats: previous ids given as a Python list",
            "device": "penalize_repeats_hidden: [inputs on the meta device]",
            "dtype kept": "penalize_repeats: float16 stays float16",
            "ValueError": "penalize_repeats_hidden: penalty 0 must raise ValueError",
            "real vocabulary": "penalize_repeats_hidden: float32 [2, 49152], 600 previous ids",
            "ValueError (visible)": "penalize_repeats: penalty 0 must raise ValueError",
            "determinism": "penalize_repeats: [called twice]",
            "no mutation": "penalize_repeats: contract no_mutation",
        },
    },
    "process_logits": {
        "args": {
            "logits": "float16/bfloat16/float32/float64 [..., V]",
            "settings": "keywords, neutral defaults",
        },
        "returns": "new logits [..., V], input dtype",
        "text": ('`top_k=0` is a setting, not "off"', "never modify the input"),
        "properties": {
            "order of the steps": "process_logits: temperature BEFORE top-p",
            "top_k=0 reaches top_k_filter": "process_logits_hidden: top_k=0 is a setting",
            "top_p=0 runs": "process_logits_hidden: top_p=0: top-p runs",
            "dtype kept": "process_logits: float16 stays float16",
            "top_k=0 reaches top_k_filter (visible)": "process_logits: top_k=0 is a setting",
            "determinism": "process_logits: [called twice]",
            "no mutation": "process_logits: contract no_mutation",
        },
    },
    "sample_next": {
        "args": {
            "logits": "float [V] or [B, V]",
            "generator": "torch.Generator",
            "settings": "process_logits's",
        },
        "returns": "long ids [] or [B]",
        "text": ("with no random number drawn", "(their softmax, computed in float32)"),
        "properties": {
            "T = 0: no draw": "sample_next_hidden: temperature 0 with three tied maxima",
            "removed tokens never drawn (q >= 1e-5)": "sample_next_hidden: not even once in 1e5",
            "dtype long": "sample_next: contract long ids",
            "only the generator": "sample_next: contract generator",
            "real vocabulary": "sample_next_hidden: [4, 49152] identical rows",
            "determinism (same seed)": "sample_next: [called twice]",
            "no mutation": "sample_next: contract no_mutation",
        },
    },
    "distinct_n": {
        "args": {"sequences": "list of lists of ids (may be empty)", "n": "int >= 1"},
        "returns": "Python float",
        "text": (
            "n-grams never span two sequences",
            "`0.0` if there are no\nn-grams",
            "`ValueError` for `n < 1`",
        ),
        "properties": {
            "a float": "distinct_n: contract number",
            "never across sequences": "distinct_n: n-grams never cross sequences",
            "no n-grams": "distinct_n: no n-grams at all: 0.0",
            "ids, not digits": "distinct_n_hidden: multi-digit ids",
            "ValueError": "distinct_n_hidden: n=0 must raise ValueError",
            "ValueError (visible)": "distinct_n: n=0 must raise ValueError",
            "determinism": "distinct_n: [called twice]",
            "no mutation": "distinct_n: contract no_mutation",
        },
    },
    "ends_in_loop": {
        "args": {
            "ids": "list of ids (may be empty)",
            "max_period": "int >= 1",
            "min_repeats": "int >= 1",
        },
        "returns": "bool",
        "text": ("also for sequences too short to contain any such tail",),
        "properties": {
            "max_period inclusive": "ends_in_loop: period 4 with max_period=4 (inclusive)",
            "too short": "ends_in_loop: too short for 3 repeats",
            "empty": "ends_in_loop: empty sequence",
            "defaults": "ends_in_loop_hidden: period 21 x 3",
            "determinism": "ends_in_loop: [called twice]",
            "no mutation": "ends_in_loop: contract no_mutation",
        },
    },
}

# generation_loop (course_lib/checks/generation_loop.py)
DOMAINS["generation_loop"] = {
    "generate_loop": {
        "args": {
            "model": "model(idx, attention_mask=mask) -> [B, T, V]",
            "prompts": "lists of ids, >= 1 each",
            "max_new_tokens": "int >= 0",
            "step": "callable [B, V] -> [B] ids",
            "eos_id": "int or None (0 is an id)",
            "stop_sequences": "list[int] token stops and str text stops (may sit inside a token, "
            "straddle tokens, or be bytes of several tokens)",
            "tokenizer": "decode(ids) -> str",
            "generator": "passed on to step",
        },
        "returns": "one {'tokens': [python ints], 'finish_reason': 'eos' | 'stop' | 'length'} per "
        "prompt",
        "text": (
            "the completing token is returned",
            'an `eos_id` token is `"eos"` even if a stop sequence ends with that id',
            'EOS or a stop on the last allowed token is `"eos"` or `"stop"`, not `"length"`',
        ),
        "properties": {
            "EOS not returned": "generate_loop: EOS id 6 ends the row (EOS itself not returned)",
            "max_new_tokens = 0": "generate_loop: max_new_tokens = 0",
            "only new tokens count": "generate_loop: only NEW tokens count",
            "text stop straddling tokens": "generate_loop_hidden: straddling tokens 3-4",
            "text stop inside a token carrying more text": "generate_loop_hidden: completed "
            "inside new token 4",
            "EOS first": "generate_loop_hidden: the EOS token would also complete a stop sequence",
            "last allowed token": "generate_loop_hidden: EOS on the last allowed token",
            "generator passed on": "generate_loop: the generator is passed on to the step as "
            "generator=",
            "determinism": "generate_loop: [called twice]",
        },
    },
    "attend_with_cache": {
        "args": {
            "q": "float [B, n_head, T, hd]",
            "k_new, v_new": "[B, n_kv, T, hd]",
            "k_cache, v_cache": "[B, n_kv, past, hd], past may be 0",
            "n_head": "a multiple of n_kv",
        },
        "returns": "(y [B, n_head, T, hd], k_all, v_all): any float dtype; float64 inputs need "
        "float64 accuracy",
        "text": (
            "(`past` may be 0)",
            "any float dtype may come back, but float64 inputs need float64 accuracy",
            "`device=q.device`",
        ),
        "properties": {
            "any float dtype (float64 result accepted)": "attend_with_cache_hidden: contract "
            "any_float",
            "float64 accuracy": "attend_with_cache: float64 inputs: float64 accuracy (rtol 1e-9)",
            "past = 0": "attend_with_cache: prefill: empty cache",
            "GQA mapping": "attend_with_cache: head h reads KV head h // 2",
            "masked entries -inf": "attend_with_cache_hidden: masked entries must be -inf",
            "device": "attend_with_cache_hidden: [inputs on the meta device]",
            "determinism": "attend_with_cache: [called twice]",
            "no mutation": "attend_with_cache: contract no_mutation",
        },
    },
    "kv_cache_bytes": {
        "args": {
            "n_layer, n_head, n_kv_head, head_dim, n_tokens, "
            "batch_size": "ints (n_tokens may be 0)",
            "bytes_per_value": "4, 2, 1",
        },
        "returns": "Python int (products far beyond 2^24 and 2^31)",
        "text": ("Return the number of bytes as a Python `int`",),
        "properties": {
            "an int, exact at 70B scale": "kv_cache_bytes: Llama-2/3-70B",
            "no tokens": "kv_cache_bytes_hidden: no tokens yet",
            "no tokens (visible)": "kv_cache_bytes: no tokens yet: 0 bytes",
            "determinism": "kv_cache_bytes: [called twice]",
        },
    },
    "weight_bytes": {
        "args": {
            "n_params": "int >= 0",
            "bits": "int >= 1",
            "group_size": "None or int >= 1",
            "group_bytes": "int >= 0",
        },
        "returns": "Python int",
        "text": ("Return a Python `int`", "when `n_params × bits` is not a whole number of bytes"),
        "properties": {
            "an int beyond 2^24": "weight_bytes: all 210 linear weights of SmolLM2",
            "zero weights": "weight_bytes: no weights at all",
            "ValueError (groups)": "weight_bytes: 48 weights are not whole groups of 32",
            "ValueError (bytes)": "weight_bytes: 3 weights x 4 bits = 12 bits is not whole bytes",
            "ValueError (bits)": "weight_bytes: 0 bits per weight",
            "determinism": "weight_bytes: [called twice]",
        },
    },
    "fit_exponent": {
        "args": {"ns": "positive numbers", "times": "positive numbers, same length"},
        "returns": "Python float: the least-squares slope",
        "text": ("as a Python `float`", "**least-squares slope of log(times) against log(ns)**"),
        "properties": {
            "a float": "fit_exponent_hidden: contract number",
            "every point counts": "fit_exponent: one slow point inside",
            "determinism": "fit_exponent: [called twice]",
        },
    },
    "beam_search": {
        "args": {
            "model": "model(idx [1, T]) -> [1, T, V]",
            "prompt_ids": "list of ids",
            "beam_width": "int >= 1, may equal or exceed the vocabulary",
            "max_new_tokens": "int >= 1",
            "eos_id": "an id (0 included)",
            "length_penalty": "float >= 0",
        },
        "returns": "(tokens without EOS, normalised score float)",
        "text": ("Width 1 must equal greedy", "**without** its EOS"),
        "properties": {
            "width 1 = greedy": "beam_search: width 1 = greedy",
            "length_penalty 0": "beam_search: length_penalty 0 (plain sum)",
            "eos_id 0": "beam_search_hidden: eos_id=0",
            "width = V": "beam_search_hidden: width 6 on a 6-token vocabulary",
            "width > V": "beam_search_hidden: width 9 on a 6-token vocabulary",
            "determinism": "beam_search: [called twice]",
        },
    },
}

# debugging_generation (course_lib/checks/debugging_generation.py)
DOMAINS["debugging_generation"] = {
    "find_cycle": {
        "args": {
            "ids": "list of ints or a 1-D LongTensor (may be empty)",
            "max_period": "int >= 1",
            "min_repeats": "int >= 1",
        },
        "returns": "(period, repeats), two Python ints; (0, 0) when none",
        "text": ("(also for empty or too-short sequences)", "`1..max_period` (inclusive)"),
        "properties": {
            "shortest period": "find_cycle: period 2, not 4: the SHORTEST cycle",
            "max_period inclusive": "find_cycle: period 4 with max_period=4 (inclusive)",
            "two ints": "find_cycle: one token: [7]",
            "competing periods: the shortest wins (visible)": "find_cycle: periods 1 and 5",
            "determinism": "find_cycle: [called twice]",
        },
    },
    "repetition_rate": {
        "args": {"ids": "list of ints or a 1-D LongTensor", "n": "int >= 1 (default 4)"},
        "returns": "Python float; 0.0 without n-grams",
        "text": ("`0.0` if `ids` has no n-grams", "Raise `ValueError` if `n < 1`"),
        "properties": {
            "a float": "repetition_rate: contract number",
            "no n-grams": "repetition_rate: no n-grams at all: 0.0",
            "a LongTensor": "repetition_rate: a 1-D LongTensor works too",
            "ValueError": "repetition_rate: n=0 must raise ValueError",
            "determinism": "repetition_rate: [called twice]",
        },
    },
    "repetition_penalty": {
        "args": {
            "logits": "float16/bfloat16/float32/float64 [B, V]",
            "ids": "LongTensor [B, L]",
            "penalty": "> 0",
            "prompt_len": "int >= 0",
            "count_prompt": "bool",
            "window": "None or int >= 0 (0: none)",
        },
        "returns": "new tensor, the input's dtype, computed in it, on logits' device",
        "text": (
            "(`window=0`: none)",
            "float64 logits keep float64 accuracy",
            "`device=logits.device`",
        ),
        "properties": {
            "window 0": "repetition_penalty: window=0: nothing counts",
            "once per token": "repetition_penalty: a token seen 3 times is penalised once",
            "dtype kept": "repetition_penalty: float16 stays float16",
            "float64 accuracy": "repetition_penalty: float64 logits keep float64 accuracy",
            "device": "repetition_penalty_hidden: [inputs on the meta device]",
            "cost (vectorised)": "repetition_penalty_hidden: cost: V = 5000",
            "no Python loop over the vocabulary (visible)": "repetition_penalty: cost: V = 49152",
            "determinism": "repetition_penalty: [called twice]",
            "no mutation": "repetition_penalty: contract no_mutation",
        },
    },
    "presence_frequency_penalty": {
        "args": {
            "logits": "float16/bfloat16/float32/float64 [B, V]",
            "ids": "[B, L], a token may repeat hundreds of times (beyond bfloat16's integers)",
            "presence, frequency": "any floats (negative encourage)",
            "prompt_len": "int >= 0",
        },
        "returns": "new tensor, the input's dtype; computed in float32 for half dtypes, float64 "
        "for float64",
        "text": (
            "Compute in float32\nfor float16/bfloat16 logits (float64 stays float64)",
            "**Vectorised**",
        ),
        "properties": {
            "counts": "presence_frequency_penalty: id 1 six times",
            "> 256 repeats in bfloat16": "presence_frequency_penalty_hidden: tokens repeated 257 "
            "to 300 times",
            "dtype kept": "presence_frequency_penalty: bfloat16 stays bfloat16",
            "float64 accuracy": "presence_frequency_penalty: float64 logits keep float64 accuracy",
            "device": "presence_frequency_penalty_hidden: [inputs on the meta device]",
            "cost (vectorised)": "presence_frequency_penalty_hidden: cost: V = 5000",
            "no Python loop over the vocabulary or the history "
            "(visible)": "presence_frequency_penalty: cost: V = 50",
            "computed in float32 for bfloat16 (visible)": "presence_frequency_penalty: rounded "
            "once",
            "counts above 256 in bfloat16 (visible)": "presence_frequency_penalty: seen 257 times",
            "determinism": "presence_frequency_penalty: [called twice]",
            "no mutation": "presence_frequency_penalty: contract no_mutation",
        },
    },
    "ban_repeated_ngrams": {
        "args": {"logits": "float [B, V]", "ids": "[B, L] (prompt included)", "n": "int >= 1"},
        "returns": "new tensor (input dtype), banned tokens -inf",
        "text": (
            "Rows shorter than `n` ban nothing; `n = 1` bans every token the row contains",
            "Raise\n`ValueError` if `n < 1`",
        ),
        "properties": {
            "shorter than n": "ban_repeated_ngrams: shorter than n: nothing banned",
            "n = 1": "ban_repeated_ngrams: n=1: every token already in the sequence",
            "cost (not the vocabulary)": "ban_repeated_ngrams: cost: V = 4096",
            "determinism": "ban_repeated_ngrams: [called twice]",
            "no mutation": "ban_repeated_ngrams: contract no_mutation",
        },
    },
}
