"""Red team 14 (quentin05): window clamped to at most 64 (llama.cpp's default; the cases' windows were below).

Formerly `repetition_penalty__rt14_window_max64.py`."""
import torch

TARGET = "repetition_penalty"


def repetition_penalty(logits, ids, penalty, *, prompt_len=0, count_prompt=True, window=None):
    if not penalty > 0:
        raise ValueError(f"penalty must be > 0, got {penalty!r}")
    counted = ids if count_prompt else ids[:, prompt_len:]
    if window is not None:
        window = min(window, 64)
        counted = counted[:, max(counted.shape[1] - window, 0):]
    seen = torch.zeros(logits.shape, dtype=torch.bool, device=logits.device)
    seen.scatter_(1, counted.to(logits.device), True)
    return torch.where(seen, torch.where(logits > 0, logits / penalty, logits * penalty), logits)
