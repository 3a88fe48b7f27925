"""Written by a blind honest student (class 7, h05_alt3), who never saw the reference: must get full marks."""
import math

import torch
import torch.nn.functional as F

TARGET = "presence_frequency_penalty"


def presence_frequency_penalty(logits: torch.Tensor, ids: torch.Tensor, *, presence: float = 0.0,
                               frequency: float = 0.0, prompt_len: int = 0) -> torch.Tensor:
    """logits - count * frequency - [count > 0] * presence, counts over the generated ids[:, prompt_len:]."""
    V = logits.shape[-1]
    gen = ids[:, prompt_len:].to(logits.device).long()
    counts = torch.nn.functional.one_hot(gen, V).sum(dim=1).float() if gen.shape[1] else \
        torch.zeros(logits.shape, dtype=torch.float32, device=logits.device)
    penalty = counts * frequency + (counts > 0).float() * presence
    return (logits.float() - penalty).to(logits.dtype)
