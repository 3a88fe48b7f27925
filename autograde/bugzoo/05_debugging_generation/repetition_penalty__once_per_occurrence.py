"""Penalises once per occurrence: a token seen 3 times is divided 3 times.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "repetition_penalty"


def repetition_penalty(logits, ids, penalty, *, prompt_len=0, count_prompt=True, window=None):
    if not penalty > 0:
        raise ValueError("penalty must be > 0")
    counted = ids if count_prompt else ids[:, prompt_len:]
    if window is not None:
        counted = counted[:, max(counted.shape[1] - window, 0):]
    out = logits.clone()
    for r in range(out.shape[0]):
        for t in counted[r].tolist():
            out[r, t] = out[r, t] / penalty if out[r, t] > 0 else out[r, t] * penalty
    return out
