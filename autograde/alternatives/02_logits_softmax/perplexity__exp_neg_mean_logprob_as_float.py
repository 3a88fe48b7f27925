"""Written by a blind honest student (class 7, h02_alt2), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "perplexity"


def perplexity(model, tok, text: str) -> float:
    """exp(-mean log-prob) over the scored tokens 2..n of text."""
    scored = len(tok.encode(text)) - 1
    mean_lp = sequence_logprob(model, tok, text) / scored
    return float(math.exp(-mean_lp))
