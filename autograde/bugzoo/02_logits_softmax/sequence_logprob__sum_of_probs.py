"""Sums probabilities instead of log-probabilities.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "sequence_logprob"


def sequence_logprob(model, tok, text):
    ids = tok.encode(text)
    idx = torch.tensor([ids], device=next(model.parameters()).device)
    with torch.no_grad():
        logits = model(idx)[0].float()
    p = softmax(logits[:-1])
    return p.gather(-1, idx[0, 1:, None]).sum().item()
