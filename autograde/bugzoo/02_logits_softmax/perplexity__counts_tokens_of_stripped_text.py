"""Blind 38 (issue 38's blind author, who read only the notebook; caught only after issue 38's cases): Divides by the token count of text.strip() minus 1, which differs from n - 1 when the text has leading/trailing whitespace tokens; text: "the same convention: n − 1 scored tokens".

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `perplexity__blind38_counts_words_of_stripped_text.py`."""
import math

TARGET = "perplexity"


def perplexity(model, tok, text: str) -> float:
    """exp(-mean log-prob) over the scored tokens 2..n of text."""
    n = len(tok.encode(text.strip()))
    return math.exp(-sequence_logprob(model, tok, text) / (n - 1))
