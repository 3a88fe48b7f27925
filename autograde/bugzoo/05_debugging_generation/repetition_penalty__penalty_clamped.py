"""Red team 14 (tom05): the penalty clamped to [0.5, 3] (the range of every case): right in the usual range,
wrong for a penalty of 5 or 0.25, which the text allows (only penalty <= 0 is an error).

Formerly `repetition_penalty__rt14_penalty_clamped.py`."""
import torch

TARGET = "repetition_penalty"


def repetition_penalty(logits, ids, penalty, *, prompt_len=0, count_prompt=True, window=None):
    if not penalty > 0:
        raise ValueError(f"penalty must be > 0, got {penalty!r}")
    penalty = min(max(penalty, 0.5), 3.0)
    counted = ids if count_prompt else ids[:, prompt_len:]
    if window is not None:
        counted = counted[:, max(counted.shape[1] - window, 0):]
    seen = torch.zeros(logits.shape, dtype=torch.bool, device=logits.device)
    seen.scatter_(1, counted.to(logits.device), True)
    return torch.where(seen, torch.where(logits > 0, logits / penalty, logits * penalty), logits)
