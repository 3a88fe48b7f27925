"""Written by a blind honest student (class 7, h05_alt3), who never saw the reference: must get full marks.
(Updated when 05's text began to ask float64 logits for float64 accuracy: its float32 internals now follow the
input, float64 for float64; the rest is as the student wrote it.)"""
import math

import torch
import torch.nn.functional as F

TARGET = "presence_frequency_penalty"


def presence_frequency_penalty(logits: torch.Tensor, ids: torch.Tensor, *, presence: float = 0.0,
                               frequency: float = 0.0, prompt_len: int = 0) -> torch.Tensor:
    """logits - count * frequency - [count > 0] * presence, counts over the generated ids[:, prompt_len:]."""
    V = logits.shape[-1]
    gen = ids[:, prompt_len:].to(logits.device).long()
    work = torch.float64 if logits.dtype == torch.float64 else torch.float32
    counts = torch.nn.functional.one_hot(gen, V).sum(dim=1).to(work) if gen.shape[1] else \
        torch.zeros(logits.shape, dtype=work, device=logits.device)
    penalty = counts * frequency + (counts > 0).to(work) * presence
    return (logits.to(work) - penalty).to(logits.dtype)
