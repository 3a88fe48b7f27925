"""Decodes growing prefixes ids[:i+1] instead of one token at a time.

Runs in the notebook's namespace (its other functions are the reference ones)."""
TARGET = "token_pieces"


def token_pieces(enc, text):
    ids = enc.encode(text)
    return [enc.decode_bytes(ids[: i + 1]) for i in range(len(ids))]
