"""Origin: blind author 40 (shown only the student notebooks). Penalises once per occurrence (penalty ** count) instead of once per distinct token: a token seen twice is divided twice; exploits 'each distinct counted token of a row'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "repetition_penalty"

import torch

def repetition_penalty(logits, ids, penalty, *, prompt_len=0, count_prompt=True, window=None):
    if penalty <= 0:
        raise ValueError("penalty must be > 0")
    h = ids if count_prompt else ids[:, prompt_len:]
    if window is not None:
        h = h[:, h.shape[1] - min(window, h.shape[1]):]
    counts = torch.zeros(logits.shape, dtype=logits.dtype, device=logits.device)
    if h.numel():
        counts = counts.scatter_add(1, h.to(logits.device), torch.ones(h.shape, dtype=logits.dtype, device=logits.device))
    f = torch.pow(torch.full_like(counts, penalty), counts)
    return torch.where(logits > 0, logits / f, logits * f)
