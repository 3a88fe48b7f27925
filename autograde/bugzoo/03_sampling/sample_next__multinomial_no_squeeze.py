"""torch.multinomial without squeeze: shape [B, 1].

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "sample_next"


def sample_next(logits, generator=None, **settings):
    x = process_logits(logits, **settings)
    if settings.get("temperature", 1.0) == 0:
        return greedy(x)
    flat = torch.softmax(x.float(), dim=-1).reshape(-1, x.shape[-1])
    return torch.multinomial(flat, 1, generator=generator).reshape(x.shape[:-1] + (1,))
