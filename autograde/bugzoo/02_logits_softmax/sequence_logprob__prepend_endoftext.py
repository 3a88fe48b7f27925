"""A different convention than the notebook's: prepends token 0 (<|endoftext|>) and scores all n tokens.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "sequence_logprob"


def sequence_logprob(model, tok, text):
    ids = [0] + tok.encode(text)
    idx = torch.tensor([ids], device=next(model.parameters()).device)
    with torch.no_grad():
        logits = model(idx)[0].float()
    logp = log_softmax(logits[:-1])
    return logp.gather(-1, idx[0, 1:, None]).sum().item()
