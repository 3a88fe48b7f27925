"""Blind 38 (issue 38's blind author, who read only the notebook; caught only after issue 38's cases): Splits words on [ \t\n]+ only, so other whitespace (ideographic space U+3000 in Japanese, no-break space, \r) does not separate words; text: "A word is a maximal run of non-whitespace characters".

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `tokens_per_word__blind38_ascii_whitespace_only.py`."""
import re

TARGET = "tokens_per_word"


def tokens_per_word(enc, text: str) -> float:
    """Tokens of `text` under `enc` per whitespace-separated word."""
    words = [w for w in re.split(r"[ \t\n]+", text) if w]
    return float(len(enc.encode(text)) / len(words))
