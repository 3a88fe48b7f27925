"""Multiplies by T instead of dividing (T = 0.5 flattens, T = 2 sharpens).

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "probs_at_temperature"


def probs_at_temperature(logits, T):
    if T < 0:
        raise ValueError("temperature must be >= 0")
    if T == 0:
        is_max = (logits == logits.amax(dim=-1, keepdim=True)).to(logits.dtype)
        return is_max / is_max.sum(dim=-1, keepdim=True)
    return softmax(logits * T)
