"""Issue 38: the count table is built in the logits' dtype (zeros_like(logits)), then the penalty is computed in
float32 as the text asks. In bfloat16, 256 + 1 rounds back to 256: a token repeated more than 256 times is
under-counted. Only a case with > 256 repeats of one token and bfloat16 logits sees it.

Runs in the notebook's namespace (its other functions are the reference ones).

Formerly `presence_frequency_penalty__i38_counts_in_bfloat16.py`."""
import torch

TARGET = "presence_frequency_penalty"


def presence_frequency_penalty(logits, ids, *, presence=0.0, frequency=0.0, prompt_len=0):
    ids = torch.as_tensor(ids, device=logits.device).long()
    if ids.dim() == 1:
        ids = ids[None]
    gen = ids[:, prompt_len:]
    counts = torch.zeros_like(logits).scatter_add(-1, gen, torch.ones(gen.shape, dtype=logits.dtype, device=logits.device))
    work = logits.double() if logits.dtype == torch.float64 else logits.float()
    c = counts.to(work.dtype)
    out = work - frequency * c - presence * (c > 0).to(work.dtype)
    return out.to(logits.dtype)
