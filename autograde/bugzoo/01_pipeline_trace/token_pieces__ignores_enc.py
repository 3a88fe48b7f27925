"""Always uses cl100k_base, whatever tokenizer it is given.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import tiktoken

TARGET = "token_pieces"


def token_pieces(enc, text):
    cl = tiktoken.get_encoding("cl100k_base")
    return [cl.decode_single_token_bytes(t) for t in cl.encode(text)]
