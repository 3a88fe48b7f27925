"""Returns str pieces (enc.decode per token): a str cannot hold half a character.

Runs in the notebook's namespace (its other functions are the reference ones)."""
TARGET = "token_pieces"


def token_pieces(enc, text):
    return [enc.decode([t]) for t in enc.encode(text)]
