"""Encodes each word alone: loses the leading spaces and the whitespace tokens.

Runs in the notebook's namespace (its other functions are the reference ones)."""
TARGET = "tokens_per_word"


def tokens_per_word(enc, text):
    words = text.split()
    return sum(len(enc.encode(w)) for w in words) / len(words)
