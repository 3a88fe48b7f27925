"""Written by a blind honest student (class 7, h01_alt3), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "top_k_next_tokens"


def top_k_next_tokens(model, tok, prompt: str, k: int = 10) -> list[tuple[int, float]]:
    """The k most likely next tokens after `prompt`: [(token_id, probability), ...], most likely first."""
    dev = next(model.parameters()).device
    idx = torch.as_tensor([tok.encode(prompt)], dtype=torch.long, device=dev)
    with torch.no_grad():
        logits = model(idx)
    probs = torch.softmax(logits[0, -1].float(), dim=-1)
    vals, inds = torch.topk(probs, k, sorted=True)
    return list(zip(map(int, inds.cpu()), map(float, vals.cpu())))
