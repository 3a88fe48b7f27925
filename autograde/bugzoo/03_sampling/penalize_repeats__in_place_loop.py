"""The notes' loop writes into the caller's logits (values right, input modified).

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "penalize_repeats"


def penalize_repeats(logits, previous_ids, penalty):
    ids = torch.as_tensor(previous_ids, dtype=torch.long).reshape(logits.shape[:-1] + (-1,))
    rows, flat_ids = logits.reshape(-1, logits.shape[-1]), ids.reshape(-1, ids.shape[-1])
    for r in range(rows.shape[0]):
        for t in set(flat_ids[r].tolist()):
            rows[r, t] = rows[r, t] / penalty if rows[r, t] > 0 else rows[r, t] * penalty
    return logits
