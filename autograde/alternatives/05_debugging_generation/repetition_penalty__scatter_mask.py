"""Written by a blind honest student (class 7, h05_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "repetition_penalty"


def repetition_penalty(logits: torch.Tensor, ids: torch.Tensor, penalty: float, *, prompt_len: int = 0,
                       count_prompt: bool = True, window: int | None = None) -> torch.Tensor:
    """CTRL penalty on [B, V] logits for every distinct token of each row's counted history."""
    if not penalty > 0:
        raise ValueError(f"penalty must be > 0, got {penalty}")
    start = 0 if count_prompt else prompt_len
    counted = ids[:, start:]
    if window is not None:
        counted = counted[:, max(counted.shape[1] - window, 0):]
    counted = counted.to(logits.device).long()
    seen = torch.zeros(logits.shape, dtype=torch.bool, device=logits.device)
    if counted.shape[1] > 0:
        seen.scatter_(1, counted, torch.ones_like(counted, dtype=torch.bool))
    out = torch.where(logits > 0, logits / penalty, logits * penalty)
    return torch.where(seen, out, logits).to(logits.dtype)
