"""Origin: blind author 40 (shown only the student notebooks). Returns 0.0 for texts of fewer than 2 tokens instead of raising; exploits 'fewer than 2 tokens (nothing to score) raise ValueError'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "sequence_logprob"

import torch

def sequence_logprob(model, tok, text: str) -> float:
    ids = tok.encode(text)
    dev = next(model.parameters()).device
    with torch.no_grad():
        logits = model(torch.tensor([ids], device=dev))[0].float()
    lp = log_softmax(logits[:-1])
    target = torch.tensor(ids[1:], device=dev, dtype=torch.long)
    return float(lp.gather(-1, target[:, None]).sum())
