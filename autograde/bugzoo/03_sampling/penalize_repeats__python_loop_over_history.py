"""A Python loop over every row's every previous id, one logit written at a time (white-box red team
25, E4): right values, but the text says "No Python loop over tokens"; the visible check's cost
cases count the lines a call runs.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "penalize_repeats"


def penalize_repeats(logits, previous_ids, penalty):
    if not penalty > 0:
        raise ValueError(f"repetition penalty must be > 0, got {penalty!r}")
    ids = torch.as_tensor(previous_ids, dtype=torch.long, device=logits.device)
    ids = ids.reshape(logits.shape[:-1] + (-1,))
    out = logits.clone()
    flat_out = out.reshape(-1, logits.shape[-1])
    flat_ids = ids.reshape(flat_out.shape[0], ids.shape[-1])
    for r in range(flat_out.shape[0]):
        done = set()
        for t in flat_ids[r].tolist():
            if t in done:
                continue
            done.add(t)
            v = flat_out[r, t]
            flat_out[r, t] = v / penalty if v > 0 else v * penalty
    return out
