"""Origin: blind class 7.

Runs the model with autograd on (no torch.no_grad()): the same numbers, a graph kept in memory for nothing,
and against the text ("run the model under torch.no_grad()"). Blind class 7; caught by a toy model that refuses
to run with gradients enabled.

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `sequence_logprob__class7_no_no_grad.py`."""
import torch

TARGET = "sequence_logprob"


def sequence_logprob(model, tok, text):
    ids = tok.encode(text)
    if len(ids) < 2:
        raise ValueError("need at least two tokens to score")
    device = next(model.parameters()).device
    logits = model(torch.tensor([ids], device=device))[0]
    lp = log_softmax(logits[:-1].float())  # noqa: F821 - the notebook's
    return float(lp.gather(-1, torch.tensor(ids[1:], device=device)[:, None]).sum())
