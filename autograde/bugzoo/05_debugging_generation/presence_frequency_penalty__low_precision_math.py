"""Origin: blind author 40 (shown only the student notebooks). Computes in the input dtype: for bfloat16 logits, count * frequency is rounded in bf16 before subtracting (and float16 loses bits); exploits 'Compute in float32 for float16/bfloat16 logits'.

Runs in the notebook's namespace (its other functions are the reference ones)."""

TARGET = "presence_frequency_penalty"

import torch

def presence_frequency_penalty(logits, ids, *, presence=0.0, frequency=0.0, prompt_len=0):
    h = ids[:, prompt_len:].to(logits.device)
    c = torch.zeros_like(logits)
    if h.numel():
        c = c.scatter_add(1, h, torch.ones(h.shape, dtype=logits.dtype, device=logits.device))
    return logits - c * frequency - (c > 0).to(logits.dtype) * presence
