"""Blind 38 (issue 38's blind author, who read only the notebook; caught after the cases of its last round): Builds the ids with torch.tensor([ids]) on the CPU, failing for a model on a GPU; text: "the model runs once, without gradients, on a batch of one sequence on the model's device (`next(model.parameters()).device`)".

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "sequence_logprob"


def sequence_logprob(model, tok, text: str) -> float:
    """Sum of log p(token_t | tokens before t) for t = 2..n: the first token is context, not scored."""
    ids = tok.encode(text)
    if len(ids) < 2:
        raise ValueError("need at least 2 tokens to score anything")
    idx = torch.tensor([ids])
    with torch.no_grad():
        logp = torch.log_softmax(model(idx)[0].float(), dim=-1)          # (n, V)
    return float(logp[:-1].gather(-1, idx[0, 1:, None]).sum())
