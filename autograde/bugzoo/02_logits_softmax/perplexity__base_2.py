"""2 ** (-mean) with a natural-log mean: mixes bases.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "perplexity"


def perplexity(model, tok, text):
    n = len(tok.encode(text)) - 1
    return 2 ** (-sequence_logprob(model, tok, text) / n)
