"""Red team 11: only the first 16 tokens are scored (every text the checks used to try was shorter).

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `perplexity__rt11_first16.py`."""
import math

import torch

TARGET = "perplexity"


def perplexity(model, tok, text):
    ids = tok.encode(text)[:16]
    if len(ids) < 2:
        raise ValueError(f"need at least 2 tokens, got {len(ids)}")
    idx = torch.tensor([ids])
    with torch.no_grad():
        logits = model(idx)[0].float()
    logp = log_softmax(logits[:-1]).gather(-1, idx[0, 1:, None]).sum().item()  # noqa: F821 - the notebook's
    return math.exp(-logp / (len(ids) - 1))
