"""Strips each piece: " how" loses the space that is part of the token.

Runs in the notebook's namespace (its other functions are the reference ones)."""
TARGET = "token_pieces"


def token_pieces(enc, text):
    return [enc.decode_single_token_bytes(t).strip() for t in enc.encode(text)]
