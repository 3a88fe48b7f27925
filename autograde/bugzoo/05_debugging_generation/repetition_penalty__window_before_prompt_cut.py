"""Origin: blind author 40 (shown only the student notebooks). Takes the last `window` ids of the whole sequence first and then drops prompt_len positions from that window: with count_prompt=False and a window, the wrong tokens are counted; exploits 'all of ids if count_prompt, else ids[:, prompt_len:]; then, if window is not None, only the last window of those'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "repetition_penalty"

import torch

def repetition_penalty(logits, ids, penalty, *, prompt_len=0, count_prompt=True, window=None):
    if penalty <= 0:
        raise ValueError("penalty must be > 0")
    h = ids
    if window is not None:
        h = h[:, max(h.shape[1] - window, 0):]
    if not count_prompt:
        h = h[:, prompt_len:]
    seen = torch.zeros(logits.shape, dtype=torch.bool, device=logits.device)
    if h.numel():
        seen = seen.scatter(1, h.to(logits.device), True)
    return torch.where(seen, torch.where(logits > 0, logits / penalty, logits * penalty), logits)
