"""Red team 14: only the last 256 ids of the history are counted when no window is given.

Formerly `repetition_penalty__rt14_last256.py`."""
import torch

TARGET = "repetition_penalty"


def repetition_penalty(logits, ids, penalty, *, prompt_len=0, count_prompt=True, window=None):
    if not penalty > 0:
        raise ValueError(f"penalty must be > 0, got {penalty!r}")
    counted = ids if count_prompt else ids[:, prompt_len:]
    keep = 256 if window is None else window
    counted = counted[:, max(counted.shape[1] - keep, 0):]
    seen = torch.zeros(logits.shape, dtype=torch.bool, device=logits.device)
    seen.scatter_(1, counted.to(logits.device), True)
    return torch.where(seen, torch.where(logits > 0, logits / penalty, logits * penalty), logits)
