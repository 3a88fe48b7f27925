"""Origin: blind author 40 (shown only the student notebooks). Runs the model once per prefix (n-1 passes) taking the last position each time: same value for a causal model, but not 'the model runs once'; exploits 'the model runs once, without gradients'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "sequence_logprob"

import torch

def sequence_logprob(model, tok, text: str) -> float:
    ids = tok.encode(text)
    if len(ids) < 2:
        raise ValueError("need at least 2 tokens")
    dev = next(model.parameters()).device
    total = 0.0
    with torch.no_grad():
        for t in range(1, len(ids)):
            logits = model(torch.tensor([ids[:t]], device=dev))[0, -1].float()
            total += float(log_softmax(logits)[ids[t]])
    return total
