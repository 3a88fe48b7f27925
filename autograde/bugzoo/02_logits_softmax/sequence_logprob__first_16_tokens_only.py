"""Red team 11: only the first 16 tokens are scored (every text the checks used to try was shorter).

Formerly `sequence_logprob__class11_first16.py`."""
# log_softmax: the notebook's own (the zoo runs in the reference namespace)
import torch

TARGET = "sequence_logprob"


def sequence_logprob(model, tok, text):
    ids = tok.encode(text)
    if len(ids) < 2:
        raise ValueError(f"need at least 2 tokens to score a text, got {len(ids)} for {text!r}")
    idx = torch.tensor([ids[:16]])
    with torch.no_grad():
        logits = model(idx)[0].float()
    logp = log_softmax(logits[:-1])  # the notebook's own
    return logp.gather(-1, idx[0, 1:, None]).sum().item()
