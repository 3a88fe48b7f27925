"""Always counts the prompt (HF's behaviour), ignoring count_prompt=False.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "repetition_penalty"


def repetition_penalty(logits, ids, penalty, *, prompt_len=0, count_prompt=True, window=None):
    if not penalty > 0:
        raise ValueError("penalty must be > 0")
    counted = ids
    if window is not None:
        counted = counted[:, max(counted.shape[1] - window, 0):]
    seen = torch.zeros(logits.shape, dtype=torch.bool).scatter(1, counted, True)
    return torch.where(seen, torch.where(logits > 0, logits / penalty, logits * penalty), logits)
