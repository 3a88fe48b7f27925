"""Divides every seen logit, so negative ones go UP (the notes' advanced_sampling multiplies the negative ones).

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "penalize_repeats"


def penalize_repeats(logits, previous_ids, penalty):
    ids = torch.as_tensor(previous_ids, dtype=torch.long).reshape(logits.shape[:-1] + (-1,))
    seen = torch.zeros(logits.shape, dtype=torch.bool).scatter(-1, ids, True)
    return torch.where(seen, logits / penalty, logits)
