"""Tokenizers: the seed's cl100k_base ids offline, and SmolLM2's tokenizer equal to an independent
oracle.

Oracle: Hugging Face `tokenizers` configured as SmolLM2's real tokenizer.json (BPE on the same vocab
and merges; pre-tokenizer Digits(individual_digits=True) then ByteLevel). Not transformers' GGUF
conversion, which uses the plain GPT-2 split (wrong on runs of spaces before digits).
"""

from __future__ import annotations

import random
from pathlib import Path

import _real
import pytest
import tiktoken

import course_lib  # noqa: F401  (importing it makes cl100k_base available offline)
from course_lib.tokenizer import CL100K_SHA256, chat_prompt, token_bytes

SEED_TEXT = "Hello, how are you today?"
SEED_IDS = [9906, 11, 1268, 527, 499, 3432, 30]  # published in the course seed (cl100k_base)


def test_seed_snippet_runs_offline_unchanged():
    enc = tiktoken.get_encoding("cl100k_base")
    assert enc.encode(SEED_TEXT) == SEED_IDS
    assert [enc.decode([t]) for t in SEED_IDS] == [
        "Hello",
        ",",
        " how",
        " are",
        " you",
        " today",
        "?",
    ]


def test_offline_cl100k_seeds_an_empty_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    from course_lib.tokenizer import enable_offline_cl100k

    assert enable_offline_cl100k()
    [cached] = list(tmp_path.iterdir())
    # sha1 of the official blob URL
    assert cached.name == "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
    import hashlib

    assert hashlib.sha256(cached.read_bytes()).hexdigest() == CL100K_SHA256


def test_offline_cl100k_leaves_an_existing_cache_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    existing = tmp_path / "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
    existing.write_bytes(b"whatever the online path put here")
    from course_lib.tokenizer import enable_offline_cl100k

    enable_offline_cl100k()
    assert existing.read_bytes() == b"whatever the online path put here"


@pytest.fixture(scope="module")
def tok():
    return _real.tokenizer()


@pytest.fixture(scope="module")
def oracle():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    ck = _real.checkpoint()
    vocab = {t: i for i, t in enumerate(ck.tokens)}
    merges = [tuple(m.split(" ")) for m in ck.merges]
    hf = Tokenizer(
        models.BPE(vocab=vocab, merges=merges, unk_token=None, fuse_unk=False, byte_fallback=False)
    )
    hf.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    hf.decoder = decoders.ByteLevel()
    hf.add_special_tokens([t for t, kind in zip(ck.tokens, ck.token_types) if kind == 3])
    return hf


MISSING = "".join(chr(b) for b in (0x04, 0x06, 0x13, 0x14, 0x16, 0x1D))

FIXED = [
    "",
    " ",
    "  ",
    "\n",
    "\n\n\n",
    "\t",
    " \t\n ",
    "Hello, how are you today?",
    "The capital of France is",
    "It's 3.14159 and 1,000,000 — or 1e-9?",
    "a   1",
    "a 1",
    "x  12  345   6789",
    "   42",
    "\n 7\n\n 8",
    "def f(x):\n    return x ** 2  # square\n\n\tif x>=10: print(f'{x:>5}')",
    "for (int i = 0; i < n; ++i) { sum += a[i]; }",
    "I'm, you're, they've, we'll, she'd, it's, Don't SHOUT'S",
    "naïve café, Ångström, Straße",
    "안녕하세요, 세계!",
    "日本語のテキスト、二〇二六年",
    "مرحبا بالعالم",
    "Привет, мир 2026",
    "emoji: 😀👍🏽 👨‍👩‍👧‍👦 🇫🇷 ❤️",
    "math: ∑ᵢ xᵢ² ≤ ∞, π≈3.14",
    "    indented\n        more",
    "trailing spaces   ",
    "mixed\r\nline endings\r",
    "٣ Arabic-Indic digit, ² superscript, ½ fraction, Ⅻ numeral",
    f"control chars{MISSING}between",
    "a\x04b",
    "!\x06!",
    "\x13\x14",
    "x \U00040000 y",
    "\U00080000\U000bffff",
    "<|im_start|>user\nhi<|im_end|>",
]


def fuzz_strings(n: int, seed: int) -> list[str]:
    """Random strings biased towards the hard parts: whitespace runs next to digits, punctuation,
    unicode."""
    rng = random.Random(seed)
    atoms = [
        " ",
        "  ",
        "   ",
        "\n",
        "\n\n",
        "\t",
        "0",
        "1",
        "7",
        "42",
        "3.5",
        "a",
        "the",
        " cat",
        "I",
        "'s",
        "'ll",
        ".",
        ",",
        "!?",
        "...",
        "(",
        ")",
        "{",
        "}",
        "=",
        "é",
        "ß",
        "한",
        "中",
        "😀",
        "👍🏽",
        "\u200d",
        "\x04",
        "\U00040000",
        "_",
        "-",
        "—",
        "’",
        "x1",
        "A",
        "ABC",
    ]
    return ["".join(rng.choice(atoms) for _ in range(rng.randint(1, 30))) for _ in range(n)]


def corpus() -> list[str]:
    repo = Path(__file__).resolve().parents[1]
    files = [p.read_text() for p in sorted((repo / "course_lib").glob("*.py"))]
    return FIXED + fuzz_strings(3000, seed=0) + files


def test_ids_equal_the_oracle_on_every_string(tok, oracle):
    texts = corpus()
    wrong = [
        (t, tok.encode(t), oracle.encode(t, add_special_tokens=False).ids)
        for t in texts
        if "<|" not in t and tok.encode(t) != oracle.encode(t, add_special_tokens=False).ids
    ]
    assert not wrong, f"{len(wrong)}/{len(texts)} strings differ, e.g. {wrong[:3]}"


def test_special_tokens_match_the_oracle_when_allowed(tok, oracle):
    text = "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n\x04"
    assert (
        tok.encode(text, allowed_special="all") == oracle.encode(text, add_special_tokens=False).ids
    )
    with pytest.raises(ValueError, match="disallowed special token"):
        tok.encode(text)


def test_decode_inverts_encode(tok):
    texts = [t for t in corpus() if "<|" not in t and not tok._needs_slow_path.search(t)]
    assert len(texts) > 1000  # most fuzz strings avoid the dropped characters
    bad = [t for t in texts if tok.decode(tok.encode(t)) != t]
    assert not bad, bad[:3]


def test_dropped_control_bytes_vanish_from_the_round_trip(tok):
    assert tok.decode(tok.encode(f"a{MISSING}b")) == "ab"


def test_missing_bytes_are_the_documented_21(tok):
    assert tok.missing_bytes == bytes(
        [0x04, 0x06, 0x13, 0x14, 0x16, 0x1D, 0xC0, 0xC1, 0xF1, 0xF2, *range(0xF5, 0x100)]
    )


def test_missing_bytes_do_not_panic(tok):
    for text in ["\x04", "a\x1db", "\U00040000", "\U000bffff!", "1\x13 2"]:
        tok.encode(text)  # tiktoken alone raises pyo3_runtime.PanicException (a BaseException) here
        tok.encode_ordinary(text)
        tok.encode_batch([text, "plain"])


def test_vocabulary_spelling_round_trips_every_byte():
    ck = _real.checkpoint()
    singles = {
        token_bytes(t)
        for t, kind in zip(ck.tokens, ck.token_types)
        if kind != 3 and len(token_bytes(t)) == 1
    }
    assert len(singles) == 256 - 21


def test_chat_prompt_matches_the_models_template(tok):
    # The GGUF's Jinja template, rendered for one user message, as the model was trained to see it.
    rendered = (
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
        "Face<|im_end|>\n"
        "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n"
    )
    ids = chat_prompt(tok, [{"role": "user", "content": "What is 2+2?"}])
    assert ids == tok.encode(rendered, allowed_special="all")
    assert _render_template(_real.checkpoint().chat_template, "What is 2+2?") == rendered


def _render_template(template: str, user: str) -> str:
    import jinja2

    return (
        jinja2.Environment()
        .from_string(template)
        .render(messages=[{"role": "user", "content": user}], add_generation_prompt=True)
    )


def test_seed_ids_differ_between_tokenizers(tok):
    # Different vocabularies give different ids for the same text: ids only mean something with
    # their tokenizer.
    assert tok.encode(SEED_TEXT) != SEED_IDS
    assert tok.decode(tok.encode(SEED_TEXT)) == SEED_TEXT
