"""Blind red team 17: red team 14's loop over the vocabulary after a constant busy loop, so that the work on
the large case stays under twice the small case's; caught by the cap on lines at V = 49152.

Formerly `repetition_penalty__rt17_padded_vocab_loop.py`."""
import torch

TARGET = "repetition_penalty"


def _repetition_penalty_looped(logits, ids, penalty, *, prompt_len=0, count_prompt=True, window=None):
    if not penalty > 0:
        raise ValueError(f"penalty must be > 0, got {penalty!r}")
    counted = ids if count_prompt else ids[:, prompt_len:]
    if window is not None:
        counted = counted[:, max(counted.shape[1] - window, 0):] if window > 0 else counted[:, :0]
    out = logits.clone()
    for b in range(logits.shape[0]):
        seen = set(counted[b].tolist())
        row = out[b].tolist()
        for j in range(len(row)):
            if j in seen:
                row[j] = row[j] / penalty if row[j] > 0 else row[j] * penalty
        out[b] = torch.tensor(row, dtype=logits.dtype)
    return out


def repetition_penalty(*args, **kwargs):
    for _ in range(600_000):  # busy work, the same on every case: the ratio between two cases falls under 2
        pass
    return _repetition_penalty_looped(*args, **kwargs)
