"""Returns k - 1 tokens (slicing [:k-1]).

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "top_k_next_tokens"


def top_k_next_tokens(model, tok, prompt, k=10):
    device = next(model.parameters()).device
    idx = torch.tensor([tok.encode(prompt)], device=device)
    with torch.no_grad():
        probs = torch.softmax(model(idx)[0, -1].float(), dim=-1)
    order = torch.argsort(probs, descending=True)[: k - 1]
    return [(int(i), float(probs[i])) for i in order]
