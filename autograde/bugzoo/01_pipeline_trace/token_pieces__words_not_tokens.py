"""Splits the text into words: words are not tokens.

Runs in the notebook's namespace (its other functions are the reference ones)."""
TARGET = "token_pieces"


def token_pieces(enc, text):
    return [w.encode("utf-8") for w in text.split()]
