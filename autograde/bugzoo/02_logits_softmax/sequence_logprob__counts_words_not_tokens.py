"""Origin: blind class 9.

Refuses texts of fewer than 2 words instead of 2 tokens: 'Hello!' is one word but two tokens, one of them
scorable (blind class 9). The text: raise ValueError if there are fewer than 2 tokens.

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `sequence_logprob__class9_words.py`."""
import torch

TARGET = "sequence_logprob"


def sequence_logprob(model, tok, text):
    ids = tok.encode(text)
    if len(ids) < 2 or len(text.split()) < 2:
        raise ValueError("need at least 2 tokens")
    device = next(model.parameters()).device
    with torch.no_grad():
        logits = model(torch.tensor([ids], device=device))[0].float()
    logp = log_softmax(logits[:-1])  # noqa: F821 - the notebook's
    return float(logp.gather(-1, torch.tensor(ids[1:], device=device)[:, None]).sum())
