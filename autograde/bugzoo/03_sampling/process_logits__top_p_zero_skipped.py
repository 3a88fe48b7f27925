"""Red team 15: `if 0 < top_p < 1:` skips top-p at top_p=0 (the text runs it whenever top_p < 1: one token kept).

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `process_logits__rt15_top_p_zero_skipped.py`."""
import torch

TARGET = "process_logits"


def process_logits(logits, *, temperature=1.0, top_k=None, top_p=1.0, min_p=0.0, repetition_penalty=1.0,
                   previous_ids=None):
    x = logits
    if repetition_penalty != 1.0 and previous_ids is not None:
        x = penalize_repeats(x, previous_ids, repetition_penalty)
    x = apply_temperature(x, temperature)
    if top_k is not None:
        x = top_k_filter(x, top_k)
    if 0 < top_p < 1:
        x = top_p_filter(x, top_p)
    if min_p > 0.0:
        x = min_p_filter(x, min_p)
    return x
