"""Red team 15: `if T < 1e-4:` takes the greedy path for small positive T (the text: any T > 0 returns logits / T).

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `apply_temperature__rt15_small_t_greedy.py`."""
import torch

TARGET = "apply_temperature"


def apply_temperature(logits, T):
    if T < 0:
        raise ValueError(f"temperature must be >= 0, got {T!r}")
    if T < 1e-4:
        is_max = logits == logits.amax(dim=-1, keepdim=True)
        return logits.masked_fill(~is_max, float("-inf"))
    return logits / T
