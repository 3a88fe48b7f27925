"""Red team 15: with presence == frequency == 0 the input itself is returned (the text: a new tensor).

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `presence_frequency_penalty__rt15_zero_returns_input.py`."""
import torch

TARGET = "presence_frequency_penalty"


def presence_frequency_penalty(logits, ids, *, presence=0.0, frequency=0.0, prompt_len=0):
    if presence == 0 and frequency == 0:
        return logits
    work = torch.float64 if logits.dtype == torch.float64 else torch.float32
    generated = ids[:, prompt_len:].to(logits.device)
    counts = torch.zeros(logits.shape, dtype=work, device=logits.device)
    counts.scatter_add_(1, generated, torch.ones(generated.shape, dtype=work, device=logits.device))
    delta = counts * frequency + (counts > 0).to(work) * presence
    return (logits.to(work) - delta).to(logits.dtype)
