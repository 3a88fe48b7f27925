"""The notes' structure: divides only when T != 1, then writes top-k's -inf into that tensor (the caller's when T == 1).

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "process_logits"


def process_logits(logits, *, temperature=1.0, top_k=None, top_p=1.0, min_p=0.0, repetition_penalty=1.0,
                   previous_ids=None):
    x = logits
    if repetition_penalty != 1.0 and previous_ids is not None:
        x = penalize_repeats(x, previous_ids, repetition_penalty)

    if temperature == 0:
        x = apply_temperature(x, 0)
    elif temperature != 1.0:
        x = x / temperature
    if top_k is not None and top_k < x.shape[-1]:
        x[x < torch.topk(x, top_k, dim=-1).values[..., -1:]] = float("-inf")
    if top_p < 1.0:
        x = top_p_filter(x, top_p)
    if min_p > 0.0:
        x = min_p_filter(x, min_p)
    return x
