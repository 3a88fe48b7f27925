"""Applies the temperature to the probabilities (and renormalises): that cancels out, T has no effect.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "probs_at_temperature"


def probs_at_temperature(logits, T):
    if T < 0:
        raise ValueError("temperature must be >= 0")
    p = softmax(logits) / max(T, 1e-8)
    return p / p.sum(dim=-1, keepdim=True)
