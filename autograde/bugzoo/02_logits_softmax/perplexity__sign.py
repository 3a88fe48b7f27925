"""exp(+mean log-prob): the inverse of the perplexity.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import math

TARGET = "perplexity"


def perplexity(model, tok, text):
    n = len(tok.encode(text)) - 1
    return math.exp(sequence_logprob(model, tok, text) / n)
