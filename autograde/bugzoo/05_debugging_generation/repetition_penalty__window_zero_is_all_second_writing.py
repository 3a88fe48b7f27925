"""Origin: blind author 40 (shown only the student notebooks). Takes the window with h[:, -window:]: window=0 gives -0 = the whole history instead of none; exploits '(window=0: none)'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "repetition_penalty"

import torch

def repetition_penalty(logits, ids, penalty, *, prompt_len=0, count_prompt=True, window=None):
    if penalty <= 0:
        raise ValueError("penalty must be > 0")
    h = ids if count_prompt else ids[:, prompt_len:]
    if window is not None:
        h = h[:, -window:]
    seen = torch.zeros(logits.shape, dtype=torch.bool, device=logits.device)
    if h.numel():
        seen = seen.scatter(1, h.to(logits.device), True)
    return torch.where(seen, torch.where(logits > 0, logits / penalty, logits * penalty), logits)
