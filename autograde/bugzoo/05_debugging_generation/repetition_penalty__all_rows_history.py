"""Pools the histories of every row: a token seen in row 0 is penalised in row 1 too.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "repetition_penalty"


def repetition_penalty(logits, ids, penalty, *, prompt_len=0, count_prompt=True, window=None):
    if not penalty > 0:
        raise ValueError("penalty must be > 0")
    counted = ids if count_prompt else ids[:, prompt_len:]
    if window is not None:
        counted = counted[:, max(counted.shape[1] - window, 0):]
    seen = torch.zeros(logits.shape[-1], dtype=torch.bool)
    seen[counted.reshape(-1)] = True
    return torch.where(seen, torch.where(logits > 0, logits / penalty, logits * penalty), logits)
