"""Origin: blind class 9.

Strips the prompt before encoding it: a trailing space is a token of its own, so the model is asked about
another text (blind class 9). The text: encode the prompt, add nothing.

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `top_k_next_tokens__class9_strip.py`."""
import torch

TARGET = "top_k_next_tokens"


def top_k_next_tokens(model, tok, prompt, k=10):
    device = next(model.parameters()).device
    ids = torch.tensor([tok.encode(prompt.strip())], device=device)
    with torch.no_grad():
        probs = torch.softmax(model(ids)[0, -1].float(), dim=-1)
    top = torch.topk(probs, k)
    return [(int(i), float(p)) for i, p in zip(top.indices.tolist(), top.values.tolist())]
