"""Origin: blind class 6 (tk_nof32).

softmax in the logits' dtype (no float32 upcast) (the text: softmax over the whole vocabulary (in float32)).

From a blind class (class 6); it kept its points until the hidden case named after it. Runs in the notebook's namespace.

Formerly `top_k_next_tokens__class6_tk_nof32.py`."""
import math
import torch

TARGET = "top_k_next_tokens"

def top_k_next_tokens(model, tok, prompt: str, k: int = 10) -> list[tuple[int, float]]:
    dev = next(model.parameters()).device
    idx = torch.tensor([tok.encode(prompt)], device=dev)
    with torch.no_grad():
        logits = model(idx)[0, -1]
    top = torch.topk(torch.softmax(logits, dim=-1), k)
    return [(int(i), float(p)) for p, i in zip(top.values, top.indices)]
