"""Written by a blind honest student (class 7, h02_alt2), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "sequence_logprob"


def sequence_logprob(model, tok, text: str) -> float:
    """Sum of log p(token_t | tokens before t) for t = 2..n: the first token is context, not scored."""
    ids = tok.encode(text)
    if len(ids) < 2:
        raise ValueError("fewer than 2 tokens: nothing to score")
    dev = next(model.parameters()).device
    with torch.no_grad():
        logits = model(torch.tensor([ids], device=dev))
    lp = log_softmax(logits[0])
    total = 0.0
    for t in range(1, len(ids)):
        total += float(lp[t - 1, ids[t]])
    return total
