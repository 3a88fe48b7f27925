"""Only subtracts the max, forgetting the log-sum-exp term: the exponentials do not sum to 1.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "log_softmax"


def log_softmax(logits):
    return logits - logits.amax(dim=-1, keepdim=True)
