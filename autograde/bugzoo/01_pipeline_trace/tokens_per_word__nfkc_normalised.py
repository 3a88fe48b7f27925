"""Issue 38: normalises the text to NFKC before counting ("compatibility forms are the same word"): the ligature
U+FB01 becomes "fi" and fullwidth letters ASCII, so the token count changes. Only the hidden normal-form texts
see it.

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `tokens_per_word__i38_nfkc.py`."""
import unicodedata

TARGET = "tokens_per_word"


def tokens_per_word(enc, text):
    text = unicodedata.normalize("NFKC", text)
    return len(enc.encode(text)) / len(text.split())
