"""Written by a blind honest student (class 7, h01_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "tokens_per_word"


import re
def tokens_per_word(enc, text: str) -> float:
    """Tokens of `text` under `enc` per whitespace-separated word."""
    n_words = len(re.findall(r"\S+", text))
    return float(len(enc.encode(text))) / n_words
