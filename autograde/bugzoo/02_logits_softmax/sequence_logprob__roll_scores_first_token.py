"""torch.roll to line up targets: also scores the first token with the LAST position's logits.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "sequence_logprob"


def sequence_logprob(model, tok, text):
    ids = tok.encode(text)
    idx = torch.tensor([ids], device=next(model.parameters()).device)
    with torch.no_grad():
        logits = model(idx)[0].float()
    logp = log_softmax(torch.roll(logits, shifts=1, dims=0))
    return logp.gather(-1, idx[0, :, None]).sum().item()
