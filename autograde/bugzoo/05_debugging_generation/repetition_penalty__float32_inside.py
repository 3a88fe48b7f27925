"""Blind class 10: the penalty computed in float32 whatever the logits' dtype, the result cast back: float64
logits get float32 rounding (~6e-8 relative), which the text rules out ("float64 logits: float64 accuracy").

Formerly `repetition_penalty__class10_float32_inside.py`."""
import torch

TARGET = "repetition_penalty"


def repetition_penalty(logits, ids, penalty, *, prompt_len=0, count_prompt=True, window=None):
    if not penalty > 0:
        raise ValueError(f"penalty must be > 0, got {penalty!r}")
    counted = ids if count_prompt else ids[:, prompt_len:]
    if window is not None:
        counted = counted[:, max(counted.shape[1] - window, 0):]
    seen = torch.zeros(logits.shape, dtype=torch.bool, device=logits.device)
    seen.scatter_(1, counted.to(logits.device), True)
    z = logits.float()
    penalised = torch.where(z > 0, z / penalty, z * penalty)
    return torch.where(seen, penalised, z).to(logits.dtype)
