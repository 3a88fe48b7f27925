"""Origin: blind author 40 (shown only the student notebooks). Creates the count table on the CPU with torch.zeros(logits.shape); exploits 'create any new tensor on the device of logits (device=logits.device)'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "presence_frequency_penalty"

import torch

def presence_frequency_penalty(logits, ids, *, presence=0.0, frequency=0.0, prompt_len=0):
    h = ids[:, prompt_len:]
    wd = torch.float64 if logits.dtype == torch.float64 else torch.float32
    c = torch.zeros(logits.shape, dtype=wd)
    if h.numel():
        c = c.scatter_add(1, h.cpu(), torch.ones(h.shape, dtype=wd))
    return (logits.to(wd) - c * frequency - (c > 0).to(wd) * presence).to(logits.dtype)
