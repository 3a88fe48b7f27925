"""Red team 13: the penalties computed in float32 whatever the logits' dtype, cast back: float64 logits get
float32 rounding, which the text rules out ("float64 stays float64").

Formerly `presence_frequency_penalty__rt13_float32_inside.py`."""
import torch

TARGET = "presence_frequency_penalty"


def presence_frequency_penalty(logits, ids, *, presence=0.0, frequency=0.0, prompt_len=0):
    gen = ids[:, prompt_len:]
    counts = torch.zeros(logits.shape, dtype=torch.float32, device=logits.device)
    counts.scatter_add_(1, gen.to(logits.device), torch.ones(gen.shape, dtype=torch.float32, device=logits.device))
    z = logits.float() - counts * frequency - (counts > 0).float() * presence
    return z.to(logits.dtype)
