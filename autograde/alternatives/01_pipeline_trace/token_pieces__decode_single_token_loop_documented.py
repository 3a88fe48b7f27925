"""Written by a blind honest student (class 7, h01_alt2), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "token_pieces"


def token_pieces(enc, text: str) -> list[bytes]:
    """The bytes of each token of `text` under `enc`, in order (they join to text.encode('utf-8'))."""
    pieces = []
    for token_id in enc.encode(text):
        pieces.append(bytes(enc.decode_single_token_bytes(token_id)))
    return pieces
