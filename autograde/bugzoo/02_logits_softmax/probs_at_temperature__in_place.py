"""Divides the caller's logits in place (logits /= T).

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "probs_at_temperature"


def probs_at_temperature(logits, T):
    if T < 0:
        raise ValueError("temperature must be >= 0")
    if T == 0:
        is_max = (logits == logits.amax(dim=-1, keepdim=True)).to(logits.dtype)
        return is_max / is_max.sum(dim=-1, keepdim=True)
    logits /= T
    return softmax(logits)
