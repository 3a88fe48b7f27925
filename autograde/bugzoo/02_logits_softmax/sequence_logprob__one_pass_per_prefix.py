"""Issue 35 (the visible checks did not enforce "the model runs once"): runs the model once per prefix and scores the last position of each; the same number, n - 1 forward passes.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "sequence_logprob"


def sequence_logprob(model, tok, text: str) -> float:
    ids = tok.encode(text)
    if len(ids) < 2:
        raise ValueError("need at least 2 tokens")
    idx = torch.tensor([ids], device=next(model.parameters()).device)
    total = 0.0
    with torch.no_grad():
        for t in range(1, len(ids)):
            logp = torch.log_softmax(model(idx[:, :t])[0, -1].float(), dim=-1)
            total += float(logp[ids[t]])
    return total
