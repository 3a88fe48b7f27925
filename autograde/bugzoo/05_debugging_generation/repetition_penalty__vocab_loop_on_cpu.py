"""Red team 14: a Python loop over the vocabulary, on CPU tensors (the text: "No Python loop over the vocabulary";
right values, so only the cost check can tell).

Formerly `repetition_penalty__redteam14_vocab_loop.py`."""
import torch

TARGET = "repetition_penalty"


def repetition_penalty(logits, ids, penalty, *, prompt_len=0, count_prompt=True, window=None):
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
