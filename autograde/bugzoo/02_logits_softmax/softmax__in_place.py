"""Correct values, but shifts and exponentiates the caller's tensor in place.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "softmax"


def softmax(logits):
    logits -= logits.amax(dim=-1, keepdim=True)
    logits.exp_()
    return logits / logits.sum(dim=-1, keepdim=True)
