"""torch's own form z - logsumexp(z), with the log-sum-exp written out (the built-in is forbidden here):
float32 arithmetic near logits of 1000 is only good to a few ulps of 1000, which the check must accept."""
import torch

TARGET = "log_softmax"


def log_softmax(logits):
    m = logits.amax(dim=-1, keepdim=True)
    lse = m + (logits - m).exp().sum(dim=-1, keepdim=True).log()
    return logits - lse
