"""Sums the target tokens' raw logits, never normalising them.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "sequence_logprob"


def sequence_logprob(model, tok, text):
    ids = tok.encode(text)
    idx = torch.tensor([ids], device=next(model.parameters()).device)
    with torch.no_grad():
        logits = model(idx)[0].float()
    return logits[:-1].gather(-1, idx[0, 1:, None]).sum().item()
