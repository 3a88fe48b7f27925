"""Prepends a BOS token the model's tokenizer does not add.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "top_k_next_tokens"


def top_k_next_tokens(model, tok, prompt, k=10):
    device = next(model.parameters()).device
    ids = [model.config.bos_token_id if hasattr(model, "config") else 0] + tok.encode(prompt)
    idx = torch.tensor([ids], device=device)
    with torch.no_grad():
        probs = torch.softmax(model(idx)[0, -1].float(), dim=-1)
    top = torch.topk(probs, k)
    return [(int(i), float(p)) for i, p in zip(top.indices.tolist(), top.values.tolist())]
