"""Written by a blind honest student (class 6, h05a), who never saw the reference: must get full marks."""
import math
import torch

TARGET = "presence_frequency_penalty"

def presence_frequency_penalty(logits, ids, *, presence=0.0, frequency=0.0, prompt_len=0):
    B, V = logits.shape
    gen = ids[:, prompt_len:]
    counts = torch.stack([torch.bincount(gen[b].cpu(), minlength=V)[:V] for b in range(B)]).to(logits.device, torch.float32)
    z = logits.to(torch.float32)
    z = z - frequency * counts - presence * (counts > 0).to(torch.float32)
    return z.to(logits.dtype)
