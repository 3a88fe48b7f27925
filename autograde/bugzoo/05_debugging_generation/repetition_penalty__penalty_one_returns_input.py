"""Red team 15: `if penalty == 1: return logits` - hands back the caller's own tensor (the text: a new tensor).

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `repetition_penalty__rt15_penalty_one_returns_input.py`."""
import torch

TARGET = "repetition_penalty"


def repetition_penalty(logits, ids, penalty, *, prompt_len=0, count_prompt=True, window=None):
    if not penalty > 0:
        raise ValueError(f"penalty must be > 0, got {penalty!r}")
    if penalty == 1:
        return logits
    counted = ids if count_prompt else ids[:, prompt_len:]
    if window is not None:
        counted = counted[:, max(counted.shape[1] - window, 0):]
    seen = torch.zeros(logits.shape, dtype=torch.bool, device=logits.device)
    seen.scatter_(1, counted.to(logits.device), True)
    return torch.where(seen, torch.where(logits > 0, logits / penalty, logits * penalty), logits)
