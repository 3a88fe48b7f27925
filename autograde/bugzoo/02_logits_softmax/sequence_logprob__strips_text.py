"""Blind 38 (issue 38's blind author, who read only the notebook; caught only after issue 38's cases): Encodes text.strip(), so a leading space or trailing newline is not scored; text: "the tokens are `tok.encode(text)`, nothing added".

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `sequence_logprob__blind38_strips_text.py`."""
import torch

TARGET = "sequence_logprob"


def sequence_logprob(model, tok, text: str) -> float:
    """Sum of log p(token_t | tokens before t) for t = 2..n: the first token is context, not scored."""
    ids = tok.encode(text.strip())
    if len(ids) < 2:
        raise ValueError("need at least 2 tokens to score anything")
    device = next(model.parameters()).device
    idx = torch.tensor([ids], device=device)
    with torch.no_grad():
        logp = torch.log_softmax(model(idx)[0].float(), dim=-1)
    return float(logp[:-1].gather(-1, idx[0, 1:, None]).sum())
