"""Red team 11: only the last 12 ids of the history are penalised, whatever `window` says.

Formerly `repetition_penalty__class11_last12.py`."""
import torch

TARGET = "repetition_penalty"


def repetition_penalty(logits, ids, penalty, *, prompt_len=0, count_prompt=True, window=None):
    if not penalty > 0:
        raise ValueError(f"penalty must be > 0, got {penalty!r}")
    counted = ids if count_prompt else ids[:, prompt_len:]
    keep = 12 if window is None else min(window, 12)
    counted = counted[:, max(counted.shape[1] - keep, 0):]
    seen = torch.zeros(logits.shape, dtype=torch.bool)
    seen.scatter_(1, counted, True)
    return torch.where(seen, torch.where(logits > 0, logits / penalty, logits * penalty), logits)
