"""Top-k before temperature ("top-k commutes with temperature", blind class 7): true for the kept set in exact
arithmetic, not in half precision, where dividing by T can round two neighbouring logits to one value and
top-k keeps ties. The text fixes the order: penalty -> temperature -> top-k -> top-p -> min-p.

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `process_logits__class7_top_k_before_temperature.py`."""

TARGET = "process_logits"


def process_logits(logits, *, temperature=1.0, top_k=None, top_p=1.0, min_p=0.0, repetition_penalty=1.0,
                   previous_ids=None):
    z = logits
    if repetition_penalty != 1 and previous_ids is not None:
        z = penalize_repeats(z, previous_ids, repetition_penalty)  # noqa: F821 - the notebook's
    if top_k is not None:
        z = top_k_filter(z, top_k)  # noqa: F821
    z = apply_temperature(z, temperature)  # noqa: F821
    if top_p < 1:
        z = top_p_filter(z, top_p)  # noqa: F821
    if min_p > 0:
        z = min_p_filter(z, min_p)  # noqa: F821
    return z
