"""Written by a blind honest student (class 6, h01b), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "top_k_next_tokens"

def top_k_next_tokens(model, tok, prompt: str, k: int = 10) -> list[tuple[int, float]]:
    dev = next(iter(model.parameters())).device
    idx = torch.as_tensor([tok.encode(prompt)], dtype=torch.long, device=dev)
    with torch.no_grad():
        last = model(idx)[0, -1].float()
    p = torch.softmax(last, dim=0)
    order = torch.sort(p, descending=True, stable=True)
    return [(int(i), float(x)) for x, i in zip(order.values[:k].tolist(), order.indices[:k].tolist())]
