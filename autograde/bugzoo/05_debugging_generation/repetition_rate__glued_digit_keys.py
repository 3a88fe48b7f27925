"""N-grams keyed by their ids' digits glued into a string: (1, 23) and (12, 3) collide (the text: equal n-grams). (blind class 10)

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `repetition_rate__class10_glued_digits.py`."""
import torch

TARGET = "repetition_rate"


def repetition_rate(ids, n: int = 4) -> float:
    """Share of the n-grams of ids that already occurred earlier in ids (0.0 if there are none)."""
    if n < 1:
        raise ValueError("n must be >= 1")
    seq = ids.tolist() if isinstance(ids, torch.Tensor) else list(ids)
    total = len(seq) - n + 1
    if total <= 0:
        return 0.0
    seen = set()
    rep = 0
    for i in range(total):
        g = "".join(str(t) for t in seq[i:i + n])
        if g in seen:
            rep += 1
        else:
            seen.add(g)
    return rep / total
