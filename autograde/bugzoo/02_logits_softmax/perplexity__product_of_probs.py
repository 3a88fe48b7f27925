"""Origin: blind author 40 (shown only the student notebooks). Computes the geometric mean from the product of probabilities exp(sum): a long text's product underflows to 0 -> inf perplexity; exploits 'Probabilities of whole sentences are products of many numbers below 1'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "perplexity"

import torch

def perplexity(model, tok, text: str) -> float:
    n = len(tok.encode(text))
    prob = torch.exp(torch.tensor(sequence_logprob(model, tok, text), dtype=torch.float32))
    return float(prob ** (-1.0 / (n - 1)))
