"""Written by a blind honest student (class 7, h05_alt1), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "presence_frequency_penalty"


def presence_frequency_penalty(logits: torch.Tensor, ids: torch.Tensor, *, presence: float = 0.0,
                               frequency: float = 0.0, prompt_len: int = 0) -> torch.Tensor:
    """logits - count * frequency - [count > 0] * presence, counts over the generated ids[:, prompt_len:]."""
    B, V = logits.shape
    gen = ids[:, prompt_len:].long().to(logits.device)
    counts = torch.stack([torch.bincount(gen[b], minlength=V) for b in range(B)]).to(torch.float32)
    out = logits.to(torch.float32) - frequency * counts - presence * (counts > 0).to(torch.float32)
    return out.to(logits.dtype)
