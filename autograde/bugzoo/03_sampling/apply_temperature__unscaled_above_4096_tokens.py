"""Red team 14: above 4096 tokens, T > 0 leaves the logits unscaled and T = 0 looks for the maximum among the
ids below 32768 only (every hidden row had at most ~4096 tokens).

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `apply_temperature__rt14_large_vocab.py`."""
import torch

TARGET = "apply_temperature"


def apply_temperature(logits, T):
    if T < 0:
        raise ValueError(f"temperature must be >= 0, got {T!r}")
    big = logits.shape[-1] > 4096
    if T == 0:
        ref = logits[..., :32768] if big else logits
        is_max = logits == ref.amax(dim=-1, keepdim=True)
        return logits.masked_fill(~is_max, float("-inf"))
    return logits.clone() if big else logits / T
