"""Origin: blind class 6 (tk_nograd).

runs the model with autograd on (no torch.no_grad()) (the text: inside torch.no_grad()).

From a blind class (class 6); it kept its points until the hidden case named after it. Runs in the notebook's namespace.

Formerly `top_k_next_tokens__class6_tk_nograd.py`."""
import math
import torch

TARGET = "top_k_next_tokens"

def top_k_next_tokens(model, tok, prompt: str, k: int = 10) -> list[tuple[int, float]]:
    """The k most likely next tokens after `prompt`: [(token_id, probability), ...], most likely first."""
    dev = next(model.parameters()).device
    idx = torch.tensor([tok.encode(prompt)], device=dev)
    logits = model(idx)[0, -1].detach()
    probs = torch.softmax(logits.float(), dim=-1)
    top = torch.topk(probs, k)
    return [(int(i), float(p)) for p, i in zip(top.values.tolist(), top.indices.tolist())]
