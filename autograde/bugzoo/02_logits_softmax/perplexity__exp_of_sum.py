"""exp(-sum) instead of exp(-mean): grows with the length of the text.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import math

TARGET = "perplexity"


def perplexity(model, tok, text):
    return math.exp(-sequence_logprob(model, tok, text))
