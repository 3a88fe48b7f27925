"""1 / (arithmetic mean of the token probabilities) instead of the geometric mean.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "perplexity"


def perplexity(model, tok, text):
    ids = tok.encode(text)
    idx = torch.tensor([ids], device=next(model.parameters()).device)
    with torch.no_grad():
        p = softmax(model(idx)[0, :-1].float())
    return 1.0 / p.gather(-1, idx[0, 1:, None]).mean().item()
