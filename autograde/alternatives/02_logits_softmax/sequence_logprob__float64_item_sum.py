"""Written by a blind honest student (class 6, h02a), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "sequence_logprob"

def sequence_logprob(model, tok, text):
    ids = tok.encode(text)
    if len(ids) < 2:
        raise ValueError("fewer than 2 tokens: nothing to score")
    device = next(model.parameters()).device
    with torch.no_grad():
        out = model(torch.tensor([ids], device=device))
    lp = log_softmax(out[0].double())
    return float(sum(lp[t - 1, ids[t]].item() for t in range(1, len(ids))))
