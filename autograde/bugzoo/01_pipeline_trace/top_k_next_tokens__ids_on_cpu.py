"""Blind 38 (issue 38's blind author, who read only the notebook; caught after the cases of its last round): Builds the id tensor on the CPU (torch.tensor([ids]) without device=), failing for a model on a GPU; text: "the model runs once ... on a batch of one sequence **on the model's device** (`next(model.parameters()).device`)".

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "top_k_next_tokens"


def top_k_next_tokens(model, tok, prompt: str, k: int = 10) -> list[tuple[int, float]]:
    """The k most likely next tokens after `prompt`: [(token_id, probability), ...], most likely first."""
    idx = torch.tensor([tok.encode(prompt)])
    with torch.no_grad():
        logits = model(idx)[0, -1].float()
    probs = torch.softmax(logits, dim=-1)
    top = torch.topk(probs, k)
    return [(int(i), float(p)) for i, p in zip(top.indices.tolist(), top.values.tolist())]
