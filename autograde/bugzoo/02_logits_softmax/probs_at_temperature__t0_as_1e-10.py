"""Origin: blind class 9.

T = 0 taken as a tiny temperature, softmax(logits / 1e-10): close to one-hot on ordinary logits, but float64
logits 1e-12 apart come out near 50/50 and logits near the largest float overflow to NaN (blind class 9). The
text: "T = 0: the exact greedy distribution, with no NaN".

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `probs_at_temperature__class9_tiny_T.py`."""
TARGET = "probs_at_temperature"


def probs_at_temperature(logits, T):
    if T < 0:
        raise ValueError(f"temperature must be >= 0, got {T}")
    if T == 0:
        return softmax(logits / 1e-10)  # noqa: F821 - the notebook's
    return softmax(logits / T)  # noqa: F821
