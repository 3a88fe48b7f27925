"""counted[:, -window:]: with window=0 that is the whole history, not nothing.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "repetition_penalty"


def repetition_penalty(logits, ids, penalty, *, prompt_len=0, count_prompt=True, window=None):
    if not penalty > 0:
        raise ValueError("penalty must be > 0")
    counted = ids if count_prompt else ids[:, prompt_len:]
    if window is not None:
        counted = counted[:, -window:]
    seen = torch.zeros(logits.shape, dtype=torch.bool).scatter(1, counted, True)
    return torch.where(seen, torch.where(logits > 0, logits / penalty, logits * penalty), logits)
