"""No check for T < 0: a negative temperature silently inverts the distribution.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "probs_at_temperature"


def probs_at_temperature(logits, T):
    if T == 0:
        is_max = (logits == logits.amax(dim=-1, keepdim=True)).to(logits.dtype)
        return is_max / is_max.sum(dim=-1, keepdim=True)
    return softmax(logits / T)
