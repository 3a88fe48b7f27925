"""Written by a blind honest student (class 7, h05_alt2), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "repetition_penalty"


def repetition_penalty(logits: torch.Tensor, ids: torch.Tensor, penalty: float, *, prompt_len: int = 0,
                       count_prompt: bool = True, window: int | None = None) -> torch.Tensor:
    """CTRL penalty on [B, V] logits for every distinct token of each row's counted history."""
    if penalty <= 0:
        raise ValueError("penalty must be positive")
    hist = ids if count_prompt else ids[:, prompt_len:]
    if window is not None:
        hist = hist[:, -window:] if window > 0 else hist[:, :0]
    hist = hist.to(device=logits.device, dtype=torch.long)
    vals = logits.gather(1, hist)
    vals = torch.where(vals > 0, vals / penalty, vals * penalty)
    return logits.scatter(1, hist, vals)
