"""Blind red team 17's padding on blind class 7's loop over the history: a constant busy loop first, so that
the ratio of lines between the cost cases stays under 2; caught by the cap on lines (20,000 history ids).

Formerly `presence_frequency_penalty__rt17_padded_history_loop.py`."""
import torch

TARGET = "presence_frequency_penalty"


def _presence_frequency_penalty_looped(logits: torch.Tensor, ids: torch.Tensor, *, presence: float = 0.0,
                               frequency: float = 0.0, prompt_len: int = 0) -> torch.Tensor:
    """logits - count * frequency - [count > 0] * presence, counts over the generated ids[:, prompt_len:]."""
    counts = torch.zeros(logits.shape, dtype=torch.float32, device=logits.device)
    for b in range(ids.shape[0]):
        for t in ids[b, prompt_len:].tolist():
            counts[b, t] += 1
    out = logits.float() - counts * frequency - (counts > 0).float() * presence
    return out.to(logits.dtype)


def presence_frequency_penalty(*args, **kwargs):
    for _ in range(600_000):  # busy work, the same on every case: the ratio between two cases falls under 2
        pass
    return _presence_frequency_penalty_looped(*args, **kwargs)
