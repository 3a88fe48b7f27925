"""Written by a blind honest student (class 6, h05b), who never saw the reference: must get full marks.
(Updated when 05's text began to ask float64 logits for float64 accuracy: its float32 internals now follow the
input, float64 for float64; the rest is as the student wrote it.)"""
import math
import torch

TARGET = "presence_frequency_penalty"

def presence_frequency_penalty(logits, ids, *, presence=0.0, frequency=0.0, prompt_len=0):
    V = logits.shape[-1]
    gen = ids[:, prompt_len:].to(logits.device)
    work = torch.float64 if logits.dtype == torch.float64 else torch.float32
    counts = torch.nn.functional.one_hot(gen, V).sum(dim=1).to(work) if gen.shape[1] else torch.zeros(logits.shape, dtype=work, device=logits.device)
    return (logits.to(work) - frequency * counts - presence * counts.clamp(max=1)).to(logits.dtype)
