"""Divides by the number of tokens n, though only n - 1 are scored.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import math

TARGET = "perplexity"


def perplexity(model, tok, text):
    n = len(tok.encode(text))
    return math.exp(-sequence_logprob(model, tok, text) / n)
