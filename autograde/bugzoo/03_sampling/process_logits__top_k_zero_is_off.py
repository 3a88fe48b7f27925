"""`if top_k:` takes top_k=0 as "off", so the bad setting is skipped instead of reaching top_k_filter's error.

From a blind class of honest students (session 8). Runs in the notebook's namespace."""
import torch

TARGET = "process_logits"


def process_logits(logits, *, temperature=1.0, top_k=None, top_p=1.0, min_p=0.0, repetition_penalty=1.0,
                   previous_ids=None):
    x = logits
    if repetition_penalty != 1.0 and previous_ids is not None:
        x = penalize_repeats(x, previous_ids, repetition_penalty)
    x = apply_temperature(x, temperature)
    if top_k:
        x = top_k_filter(x, top_k)
    if top_p < 1.0:
        x = top_p_filter(x, top_p)
    if min_p > 0.0:
        x = min_p_filter(x, min_p)
    return x
