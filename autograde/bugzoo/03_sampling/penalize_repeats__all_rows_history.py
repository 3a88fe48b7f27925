"""Every row is penalised with the tokens of every row's history.

Runs in the notebook's namespace (its other functions are the reference ones)."""
import torch

TARGET = "penalize_repeats"


def penalize_repeats(logits, previous_ids, penalty):
    ids = torch.as_tensor(previous_ids, dtype=torch.long).reshape(-1)
    seen = torch.zeros(logits.shape[-1], dtype=torch.bool)
    seen[ids] = True
    return torch.where(seen, torch.where(logits > 0, logits / penalty, logits * penalty), logits)
