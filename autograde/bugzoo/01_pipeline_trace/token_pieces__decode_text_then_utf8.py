"""Origin: blind author 40 (shown only the student notebooks). Decodes each token to text and re-encodes it: a token holding half a character becomes U+FFFD bytes; exploits 'the text piece of such a token does not exist' (emoji, Korean).

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "token_pieces"

def token_pieces(enc, text: str) -> list[bytes]:
    return [enc.decode([t]).encode("utf-8") for t in enc.encode(text)]
