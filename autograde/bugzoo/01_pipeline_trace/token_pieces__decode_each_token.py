"""Decode each token to text, then encode it back: split characters become U+FFFD.

Runs in the notebook's namespace (its other functions are the reference ones)."""
TARGET = "token_pieces"


def token_pieces(enc, text):
    return [enc.decode([t]).encode("utf-8") for t in enc.encode(text)]
