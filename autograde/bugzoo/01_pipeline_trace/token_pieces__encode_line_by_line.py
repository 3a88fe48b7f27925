"""Origin: blind author 40 (shown only the student notebooks). Encodes each line separately (keepends) and concatenates: BPE merges across newline runs (e.g. '\n\n') are lost; exploits 'whitespace runs' in texts any string may contain.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "token_pieces"

def token_pieces(enc, text: str) -> list[bytes]:
    out = []
    for line in text.splitlines(keepends=True):
        out += [enc.decode_single_token_bytes(t) for t in enc.encode(line)]
    return out
