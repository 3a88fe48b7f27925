"""Returns the mean negative log-probability (the cross-entropy), forgetting the exp.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "perplexity"


def perplexity(model, tok, text):
    n = len(tok.encode(text)) - 1
    return -sequence_logprob(model, tok, text) / n
