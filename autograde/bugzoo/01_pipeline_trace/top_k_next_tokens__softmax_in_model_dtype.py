"""Origin: blind author 40 (shown only the student notebooks). Takes the softmax in the model's output dtype (bfloat16 model -> bf16 probabilities); exploits 'computed in float32'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "top_k_next_tokens"

import torch

def top_k_next_tokens(model, tok, prompt: str, k: int = 10) -> list[tuple[int, float]]:
    dev = next(model.parameters()).device
    with torch.no_grad():
        logits = model(torch.tensor([tok.encode(prompt)], device=dev))[0, -1]
    probs = torch.softmax(logits, dim=-1)
    top = torch.topk(probs, k)
    return [(int(i), float(p)) for i, p in zip(top.indices.tolist(), top.values.tolist())]
