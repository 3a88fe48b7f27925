"""Origin: blind class 7.

exp(-sum of log-probs) ** (1 / (n - 1)): the same number as exp(-mean) on paper, but exp of the whole sum
overflows (OverflowError) once the text's log-probability is below about -709.8, e.g. a long or improbable text
(blind class 7). The text defines PPL = exp(-mean log-prob).

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `perplexity__class7_exp_of_sum.py`."""
import math

TARGET = "perplexity"


def perplexity(model, tok, text):
    n = len(tok.encode(text))
    return math.exp(-sequence_logprob(model, tok, text)) ** (1.0 / (n - 1))  # noqa: F821 - the notebook's
