"""Written by a blind honest student (class 6, h01a), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "token_pieces"

def token_pieces(enc, text: str) -> list[bytes]:
    return list(enc.decode_tokens_bytes(enc.encode(text)))
