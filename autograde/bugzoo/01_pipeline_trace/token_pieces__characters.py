"""One piece per character: characters are not tokens.

Runs in the notebook's namespace (its other functions are the reference ones)."""
TARGET = "token_pieces"


def token_pieces(enc, text):
    return [c.encode("utf-8") for c in text]
