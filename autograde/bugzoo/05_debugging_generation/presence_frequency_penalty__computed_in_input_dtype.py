"""Origin: blind class 6 (pf_bf16).

computes in the input dtype (bf16/fp16 counts and products) (the text: Compute in float32 and return the input's dtype).

From a blind class (class 6); it kept its points until the hidden case named after it. Runs in the notebook's namespace.

Formerly `presence_frequency_penalty__class6_pf_bf16.py`."""
import math
import torch

TARGET = "presence_frequency_penalty"

def presence_frequency_penalty(logits, ids, *, presence=0.0, frequency=0.0, prompt_len=0):
    gen = ids[:, prompt_len:].to(logits.device)
    counts = torch.zeros_like(logits)
    counts.scatter_add_(1, gen, torch.ones(gen.shape, dtype=logits.dtype, device=logits.device))
    return logits - counts * frequency - (counts > 0).to(logits.dtype) * presence
