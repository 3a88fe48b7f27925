"""Origin: blind author 40 (shown only the student notebooks). Applies temperature after the filters (llama.cpp order): identical at T = 1 (the default) but top-p/min-p keep different sets at T != 1; exploits 'Chain the steps ... in this order' (penalty -> temperature -> top-k -> top-p -> min-p).

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "process_logits"

import torch

def process_logits(logits: torch.Tensor, *, temperature: float = 1.0, top_k: int | None = None,
                   top_p: float = 1.0, min_p: float = 0.0, repetition_penalty: float = 1.0,
                   previous_ids=None) -> torch.Tensor:
    z = logits
    if repetition_penalty != 1 and previous_ids is not None:
        z = penalize_repeats(z, previous_ids, repetition_penalty)
    if top_k is not None:
        z = top_k_filter(z, top_k)
    if top_p < 1:
        z = top_p_filter(z, top_p)
    if min_p > 0:
        z = min_p_filter(z, min_p)
    return apply_temperature(z, temperature)
