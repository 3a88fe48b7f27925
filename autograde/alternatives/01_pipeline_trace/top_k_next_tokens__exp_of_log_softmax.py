"""Written by a blind honest student (class 6, h01a), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "top_k_next_tokens"

def top_k_next_tokens(model, tok, prompt: str, k: int = 10) -> list[tuple[int, float]]:
    device = next(model.parameters()).device
    ids = tok.encode(prompt)
    with torch.no_grad():
        out = model(torch.tensor(ids, device=device).unsqueeze(0))
        probs = torch.log_softmax(out[:, -1, :].to(torch.float32), dim=-1).exp()[0]
    vals, idx = torch.topk(probs, k)
    return [(int(idx[j].item()), float(vals[j].item())) for j in range(k)]
