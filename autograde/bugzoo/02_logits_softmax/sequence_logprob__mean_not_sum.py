"""Returns the mean log-probability per token instead of the sum.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "sequence_logprob"


def sequence_logprob(model, tok, text):
    ids = tok.encode(text)
    idx = torch.tensor([ids], device=next(model.parameters()).device)
    with torch.no_grad():
        logits = model(idx)[0].float()
    logp = log_softmax(logits[:-1])
    return logp.gather(-1, idx[0, 1:, None]).mean().item()
