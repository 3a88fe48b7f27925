"""Written by a blind honest student (class 6, h05a), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "repetition_penalty"

def repetition_penalty(logits, ids, penalty, *, prompt_len=0, count_prompt=True, window=None):
    if not penalty > 0:
        raise ValueError("penalty must be positive")
    counted = ids[:, (0 if count_prompt else prompt_len):]
    if window is not None:
        counted = counted[:, counted.shape[1] - min(window, counted.shape[1]):]
    seen = torch.zeros_like(logits, dtype=torch.bool).scatter(1, counted.to(logits.device),
                                                                torch.ones_like(counted, dtype=torch.bool, device=logits.device))
    z = logits.double()
    z = torch.where(seen, torch.where(z > 0, z / penalty, z * penalty), z)
    return z.to(logits.dtype)
