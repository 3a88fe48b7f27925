"""Origin: blind author 40 (shown only the student notebooks). Builds the id tensor on the CPU, not on the model's device; exploits 'the model runs ... on the model's device (next(model.parameters()).device)'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "top_k_next_tokens"

import torch

def top_k_next_tokens(model, tok, prompt: str, k: int = 10) -> list[tuple[int, float]]:
    with torch.no_grad():
        logits = model(torch.tensor([tok.encode(prompt)]))[0, -1].float()
    probs = torch.softmax(logits, dim=-1)
    top = torch.topk(probs, k)
    return [(int(i), float(p)) for i, p in zip(top.indices.tolist(), top.values.tolist())]
