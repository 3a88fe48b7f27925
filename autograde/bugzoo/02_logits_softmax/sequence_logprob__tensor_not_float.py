"""Returns the sum as a 0-dim tensor, where the text asks for a Python float.

From a blind class of honest students (session 8). Runs in the notebook's namespace."""
import torch

TARGET = "sequence_logprob"


def sequence_logprob(model, tok, text):
    ids = tok.encode(text)
    if len(ids) < 2:
        raise ValueError("need at least 2 tokens")
    idx = torch.tensor([ids], device=next(model.parameters()).device)
    with torch.no_grad():
        logits = model(idx)[0].float()
    lp = log_softmax(logits[:-1])
    return lp.gather(-1, idx[0, 1:, None]).sum()
