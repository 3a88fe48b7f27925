"""Uses the last position's logits for every token.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "sequence_logprob"


def sequence_logprob(model, tok, text):
    ids = tok.encode(text)
    idx = torch.tensor([ids], device=next(model.parameters()).device)
    with torch.no_grad():
        logits = model(idx)[0, -1].float()
    return log_softmax(logits)[idx[0, 1:]].sum().item()
