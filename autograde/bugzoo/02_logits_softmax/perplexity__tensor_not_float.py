"""Returns a 0-dim tensor, where the text asks for a Python float.

From a blind class of honest students (session 8). Runs in the notebook's namespace."""
import torch

TARGET = "perplexity"


def perplexity(model, tok, text):
    n = len(tok.encode(text)) - 1
    return torch.exp(torch.tensor(-sequence_logprob(model, tok, text) / n))
