"""Origin: blind class 6 (pl_topp_ne).

runs top-p when top_p != 1 (so top_p > 1 raises instead of being skipped) (the text: top-p runs when top_p < 1).

From a blind class (class 6); it kept its points until the hidden case named after it. Runs in the notebook's namespace.

Formerly `process_logits__class6_pl_topp_ne.py`."""
import math
import torch

TARGET = "process_logits"

def process_logits(logits: torch.Tensor, *, temperature: float = 1.0, top_k: int | None = None,
                   top_p: float = 1.0, min_p: float = 0.0, repetition_penalty: float = 1.0,
                   previous_ids=None) -> torch.Tensor:
    """penalty -> temperature -> top-k -> top-p -> min-p, each a logits -> new logits step."""
    z = logits
    if repetition_penalty != 1 and previous_ids is not None:
        z = penalize_repeats(z, previous_ids, repetition_penalty)
    z = apply_temperature(z, temperature)
    if top_k is not None:
        z = top_k_filter(z, top_k)
    if top_p != 1:
        z = top_p_filter(z, top_p)
    if min_p > 0:
        z = min_p_filter(z, min_p)
    return z
