"""Origin: blind author 40 (shown only the student notebooks). Computes in float32 and casts back: float64 logits lose float64 accuracy; exploits 'computed in it (float64 logits keep float64 accuracy)'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "repetition_penalty"

import torch

def repetition_penalty(logits, ids, penalty, *, prompt_len=0, count_prompt=True, window=None):
    if penalty <= 0:
        raise ValueError("penalty must be > 0")
    h = ids if count_prompt else ids[:, prompt_len:]
    if window is not None:
        h = h[:, h.shape[1] - min(window, h.shape[1]):]
    z = logits.float()
    seen = torch.zeros(z.shape, dtype=torch.bool, device=z.device)
    if h.numel():
        seen = seen.scatter(1, h.to(z.device), True)
    return torch.where(seen, torch.where(z > 0, z / penalty, z * penalty), z).to(logits.dtype)
