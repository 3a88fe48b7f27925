"""log_softmax over dim 1 of [1, T, V] (the positions) instead of the vocabulary.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "sequence_logprob"


def sequence_logprob(model, tok, text):
    ids = tok.encode(text)
    idx = torch.tensor([ids], device=next(model.parameters()).device)
    with torch.no_grad():
        logp = torch.log_softmax(model(idx).float(), dim=1)[0]
    return logp[:-1].gather(-1, idx[0, 1:, None]).sum().item()
