"""No special case for T = 0: logits / 0 is inf (or nan), and the softmax of that is NaN.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "probs_at_temperature"


def probs_at_temperature(logits, T):
    if T < 0:
        raise ValueError("temperature must be >= 0")
    return softmax(logits / T)
