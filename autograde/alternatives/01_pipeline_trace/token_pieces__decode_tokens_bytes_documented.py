"""Written by a blind honest student (class 7, h01_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "token_pieces"


def token_pieces(enc, text: str) -> list[bytes]:
    """The bytes of each token of `text` under `enc`, in order (they join to text.encode('utf-8'))."""
    return list(enc.decode_tokens_bytes(enc.encode(text)))
