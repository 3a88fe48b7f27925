"""Origin: blind author 40 (shown only the student notebooks). Builds the count table with scatter (value 1) instead of scatter_add: every count is capped at 1, so the frequency penalty ignores repeats; exploits 'the frequency penalty grows with every repeat'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "presence_frequency_penalty"

import torch

def presence_frequency_penalty(logits, ids, *, presence=0.0, frequency=0.0, prompt_len=0):
    h = ids[:, prompt_len:].to(logits.device)
    wd = torch.float64 if logits.dtype == torch.float64 else torch.float32
    c = torch.zeros(logits.shape, dtype=wd, device=logits.device)
    if h.numel():
        c = c.scatter(1, h, 1.0)
    return (logits.to(wd) - c * frequency - (c > 0).to(wd) * presence).to(logits.dtype)
