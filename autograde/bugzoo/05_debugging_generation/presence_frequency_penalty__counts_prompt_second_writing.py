"""Origin: blind author 40 (shown only the student notebooks). Counts the whole ids, prompt included: tokens that appear only in the prompt are penalised; exploits 'counts over ids[:, prompt_len:]' / 'the prompt is not counted'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "presence_frequency_penalty"

import torch

def presence_frequency_penalty(logits, ids, *, presence=0.0, frequency=0.0, prompt_len=0):
    wd = torch.float64 if logits.dtype == torch.float64 else torch.float32
    c = torch.zeros(logits.shape, dtype=wd, device=logits.device)
    if ids.numel():
        c = c.scatter_add(1, ids.to(logits.device), torch.ones(ids.shape, dtype=wd, device=logits.device))
    return (logits.to(wd) - c * frequency - (c > 0).to(wd) * presence).to(logits.dtype)
