"""Red team 11: T clamped to at least 1e-3 instead of T = 0 taken as greedy: logits 1e-5 apart come out near
50/50 (the text: "T = 0: the exact greedy distribution").

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `probs_at_temperature__rt11_clamp_T.py`."""
TARGET = "probs_at_temperature"


def probs_at_temperature(logits, T):
    if T < 0:
        raise ValueError(f"temperature must be >= 0, got {T}")
    return softmax(logits / max(T, 1e-3))  # noqa: F821 - the notebook's
