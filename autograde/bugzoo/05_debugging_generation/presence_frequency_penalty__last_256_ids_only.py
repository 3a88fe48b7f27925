"""Red team 14: counts over the last 256 generated ids only.

Formerly `presence_frequency_penalty__rt14_last256.py`."""
import torch

TARGET = "presence_frequency_penalty"


def presence_frequency_penalty(logits, ids, *, presence=0.0, frequency=0.0, prompt_len=0):
    work = torch.float64 if logits.dtype == torch.float64 else torch.float32
    generated = ids[:, prompt_len:][:, -256:].to(logits.device)
    counts = torch.zeros(logits.shape, dtype=work, device=logits.device)
    counts.scatter_add_(1, generated, torch.ones(generated.shape, dtype=work, device=logits.device))
    return (logits.to(work) - counts * frequency - (counts > 0).to(work) * presence).to(logits.dtype)
