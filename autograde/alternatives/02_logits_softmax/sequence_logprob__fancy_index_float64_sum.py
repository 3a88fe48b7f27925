"""Written by a blind honest student (class 7, h02_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "sequence_logprob"


def sequence_logprob(model, tok, text: str) -> float:
    """Sum of log p(token_t | tokens before t) for t = 2..n: the first token is context, not scored."""
    ids = tok.encode(text)
    if len(ids) < 2:
        raise ValueError(f"need at least 2 tokens, got {len(ids)}")
    device = next(model.parameters()).device
    x = torch.tensor([ids], device=device)
    with torch.no_grad():
        lp = log_softmax(model(x))[0]
    n = len(ids)
    return lp[torch.arange(n - 1, device=device), x[0, 1:]].double().sum().item()
