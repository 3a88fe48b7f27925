"""Origin: blind class 9.

log(softmax(...)) instead of log_softmax: the same numbers until a scored token's probability underflows to
0 in float32, where it gives -inf instead of about -200 (blind class 9). The text: use your log_softmax.

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `sequence_logprob__class9_log_of_softmax.py`."""
import torch

TARGET = "sequence_logprob"


def sequence_logprob(model, tok, text):
    ids = tok.encode(text)
    if len(ids) < 2:
        raise ValueError("need at least 2 tokens")
    device = next(model.parameters()).device
    with torch.no_grad():
        logits = model(torch.tensor([ids], device=device))[0].float()
    logp = torch.log(softmax(logits[:-1]))  # noqa: F821 - the notebook's
    return float(logp.gather(-1, torch.tensor(ids[1:], device=device)[:, None]).sum())
