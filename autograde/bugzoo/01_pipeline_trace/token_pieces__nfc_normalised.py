"""Issue 38: normalises the text to NFC first ("so that é is always one character"); the text: the pieces join to
`text.encode("utf-8")`, so a decomposed e + U+0301 must come back as its own bytes. Every earlier text was already
in NFC; only the hidden normal-form texts see it.

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `token_pieces__i38_nfc.py`."""
import unicodedata

TARGET = "token_pieces"


def token_pieces(enc, text):
    return [enc.decode_single_token_bytes(t) for t in enc.encode(unicodedata.normalize("NFC", text))]
