"""Origin: blind author 40 (shown only the student notebooks). Writes the penalised values back into logits with scatter_ (in place) and returns logits; exploits 'never modify logits'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "repetition_penalty"

import torch

def repetition_penalty(logits, ids, penalty, *, prompt_len=0, count_prompt=True, window=None):
    if penalty <= 0:
        raise ValueError("penalty must be > 0")
    h = ids if count_prompt else ids[:, prompt_len:]
    if window is not None:
        h = h[:, h.shape[1] - min(window, h.shape[1]):]
    if h.numel() == 0:
        return logits.clone()
    h = h.to(logits.device)
    g = logits.gather(1, h)
    return logits.scatter_(1, h, torch.where(g > 0, g / penalty, g * penalty))
