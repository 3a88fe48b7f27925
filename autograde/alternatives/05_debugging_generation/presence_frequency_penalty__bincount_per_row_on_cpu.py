"""Written by a blind honest student (class 6, h05a), who never saw the reference: must get full marks.
(Updated when 05's text began to ask float64 logits for float64 accuracy: its float32 internals now follow the
input, float64 for float64; the rest is as the student wrote it.)"""
import math
import torch

TARGET = "presence_frequency_penalty"

def presence_frequency_penalty(logits, ids, *, presence=0.0, frequency=0.0, prompt_len=0):
    B, V = logits.shape
    gen = ids[:, prompt_len:]
    work = torch.float64 if logits.dtype == torch.float64 else torch.float32
    counts = torch.stack([torch.bincount(gen[b].cpu(), minlength=V)[:V] for b in range(B)]).to(logits.device, work)
    z = logits.to(work)
    z = z - frequency * counts - presence * (counts > 0).to(work)
    return z.to(logits.dtype)
