"""Origin: blind author 40 (shown only the student notebooks). Builds the ids on the CPU whatever the model's device; exploits 'on the model's device (next(model.parameters()).device)'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "sequence_logprob"

import torch

def sequence_logprob(model, tok, text: str) -> float:
    ids = tok.encode(text)
    if len(ids) < 2:
        raise ValueError("need at least 2 tokens")
    with torch.no_grad():
        logits = model(torch.tensor([ids]))[0].float()
    lp = log_softmax(logits[:-1])
    return float(lp.gather(-1, torch.tensor(ids[1:])[:, None]).sum())
