"""Written by a blind honest student (class 7, h01_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "top_k_next_tokens"


def top_k_next_tokens(model, tok, prompt: str, k: int = 10) -> list[tuple[int, float]]:
    """The k most likely next tokens after `prompt`: [(token_id, probability), ...], most likely first."""
    device = next(model.parameters()).device
    ids = tok.encode(prompt)
    with torch.no_grad():
        out = model(torch.tensor(ids, device=device).unsqueeze(0))
    last = out[:, -1, :].squeeze(0).to(torch.float32)
    probs = torch.softmax(last, dim=-1)
    top = torch.topk(probs, k)
    return [(top.indices[i].item(), top.values[i].item()) for i in range(k)]
