"""Origin: blind author 40 (shown only the student notebooks). Tests `if top_k:` so top_k=0 silently means 'off'; exploits 'top_k=0 is a setting, not \'off\' (off is None): it reaches top_k_filter, whose error the caller then sees'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "process_logits"

import torch

def process_logits(logits: torch.Tensor, *, temperature: float = 1.0, top_k: int | None = None,
                   top_p: float = 1.0, min_p: float = 0.0, repetition_penalty: float = 1.0,
                   previous_ids=None) -> torch.Tensor:
    z = logits
    if repetition_penalty != 1 and previous_ids is not None:
        z = penalize_repeats(z, previous_ids, repetition_penalty)
    z = apply_temperature(z, temperature)
    if top_k:
        z = top_k_filter(z, top_k)
    if top_p < 1:
        z = top_p_filter(z, top_p)
    if min_p > 0:
        z = min_p_filter(z, min_p)
    return z
